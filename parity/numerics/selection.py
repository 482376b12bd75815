"""Which configs check_numerics takes beyond --only: the selection of the C++ tools
(parity/driver/include/kemit/driver/selection.h, the same words and messages; docs/driver.md
"Selecting configs"):

    FAMILY[:ID[,ID...]]   positional: a whole family (exact name), or some of its emitting configs
    --filter REGEX        configs whose "family:id" or `why` the regex finds (Python's re, searched)
    --last-failed         the configs that failed in the last run, from <build>/last-run/check_numerics.json

Selecting nothing is a usage error (SelectionError: exit 2), never an empty GREEN.
"""
import json
import os
import re

FAMILY_NAME = re.compile(r"[a-z][a-z0-9_]*")


class SelectionError(ValueError):
    """A malformed word or regex, a family or id that does not exist, or nothing selected."""


def parse_selection(words, filter_text):
    """{family: set(ids)} (an empty set keeps the whole family) and the compiled --filter."""
    ids = {}
    for word in words:
        family, colon, listed = word.partition(":")
        if not FAMILY_NAME.fullmatch(family):
            raise SelectionError(f"select configs as FAMILY or FAMILY:ID[,ID...] (got '{word}')")
        chosen = ids.setdefault(family, set())
        if not colon:
            continue
        for part in listed.split(","):
            if not part.isdigit() or int(part) < 1:
                raise SelectionError(f"select configs as FAMILY or FAMILY:ID[,ID...] with ids >= 1 (got '{word}')")
            chosen.add(int(part))
    try:
        pattern = re.compile(filter_text) if filter_text else None
    except re.error as error:
        raise SelectionError(f"--filter '{filter_text}' is not a regular expression: {error}") from None
    return ids, pattern


def last_report_path(build):
    return os.path.join(build, "last-run", "check_numerics.json")


def last_failed(build):
    """{family: set(ids)} of the failed cases of the last report (a case of the family itself: all)."""
    path = last_report_path(build)
    try:
        with open(path, encoding="utf-8") as handle:
            cases = json.load(handle)["summary"]["cases"]
    except FileNotFoundError:
        raise SelectionError(f"--last-failed: no last report at {path} (run once without it first)") from None
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise SelectionError(f"--last-failed: {path}: not a kemit report ({error}); run once without --last-failed") \
            from None
    ids, whole = {}, set()
    for case in cases:
        if case.get("outcome") != "failed":
            continue
        if isinstance(case.get("id"), int) and case["id"] > 0:
            ids.setdefault(case["family"], set()).add(case["id"])
        else:
            whole.add(case["family"])
    for family in whole:
        ids[family] = set()
    return ids


def selection_words(ids):
    return [family + (":" + ",".join(str(i) for i in sorted(chosen)) if chosen else "")
            for family, chosen in sorted(ids.items())]


def apply_selection(families, ids, pattern):
    """Keeps the selected (family, configs) pairs of `families`; SelectionError as the C++ tools."""
    if not ids and pattern is None:
        return families
    present = {family: {c["id"] for c in configs} for family, configs in families}
    for family, chosen in sorted(ids.items()):
        if family not in present:
            raise SelectionError(f"no family {family} among the selected config files (check the name, and --only)")
        for config_id in sorted(chosen - present[family]):
            raise SelectionError(f"{family}:{config_id}: no emitting config {config_id} in {family}'s config file")

    def keep(family, config):
        if ids and (family not in ids or (ids[family] and config["id"] not in ids[family])):
            return False
        return pattern is None or bool(pattern.search(f"{family}:{config['id']}") or
                                       pattern.search(config.get("why", "")))

    kept = [(family, [c for c in configs if keep(family, c)]) for family, configs in families]
    kept = [(family, configs) for family, configs in kept if configs]
    if not kept:
        raise SelectionError("the selection" + (f" --filter '{pattern.pattern}'" if pattern else "") +
                             " matches no config")
    return kept
