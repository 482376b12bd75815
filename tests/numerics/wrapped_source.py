"""An engine source for the numerics lane that passes every request to `base`; a test's
subclass rewrites what `build` returns (a plan, a flavor's text)."""


class WrappedSource:
    def __init__(self, base):
        self.base = base

    def arch(self, name):
        return self.base.arch(name)

    def parse_spec(self, family, spec):
        return self.base.parse_spec(family, spec)

    def flavors(self):
        return self.base.flavors()
