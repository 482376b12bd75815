"""An engine source for the numerics lane that passes every request to `base`; a test's
subclass rewrites what `build` returns (a plan, a flavor's text)."""
import barrier_census


class WrappedSource:
    def __init__(self, base):
        self.base = base

    def arch(self, name):
        return self.base.arch(name)

    def parse_spec(self, family, spec):
        return self.base.parse_spec(family, spec)

    def flavors(self):
        return self.base.flavors()


class MutatedSource(WrappedSource):
    """The engine's modules with one flavor's text rewritten."""

    def __init__(self, base, flavor, rewrite):
        super().__init__(base)
        self.flavor, self.rewrite = flavor, rewrite
        self.original = self.mutated = None

    def build(self, family, config_id, arch, spec, **lowered):
        built = self.base.build(family, config_id, arch, spec, **lowered)
        self.original = built.flavors[self.flavor]
        self.mutated = built.flavors[self.flavor] = self.rewrite(self.original)
        return built


class WithoutBarrier(WrappedSource):
    """The engine's texts with the first barrier of one section removed."""

    def __init__(self, base, section):
        super().__init__(base)
        self.section = section

    def build(self, family, config_id, arch, spec, **lowered):
        built = self.base.build(family, config_id, arch, spec, **lowered)
        text = built.canonical if self.section == "canonical" else built.flavors[self.section]
        first = barrier_census.barrier_lines(self.section, text)[0]
        mutated = barrier_census.without_line(text, first)
        if self.section == "canonical":
            built.canonical = mutated
        else:
            built.flavors[self.section] = mutated
        return built
