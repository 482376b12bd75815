"""A protocol worker that serves mutants (docs/mutation.md, "Where mutants enter").

    mutant_worker.py --serve --mutants DIR/mutants.json --lane numerics --engine-cmd "kemit_emit --serve"

It starts the real engine worker (`--engine-cmd`) and speaks docs/protocol.md on stdin/stdout
like any engine: every request goes to the real worker, and an `emit` of a (family, config) that
the mutants file names comes back with exactly one section changed (the canonical text, or one
flavor's LLVM text) by one operator at one site (parity/mutate/mutate_ops.py). A lane judges a
mutant as it judges a config: the mutants are the configs of a generated config folder, each the
spec of an original config under a mutant id.

`hello` carries `mutants`: the sha256 of the mutants file and the lane, so that no answer of this
worker is ever taken for the engine's own; the lanes' result caches key a section's verdict by the
sha256 of the text that runs, so an unmutated verdict is never served to a mutant nor the reverse
(tests/mutate/test_mutate.py shows both).

The lanes may ask for another spec than the config's (the numerics lane shrinks it): the worker
then emits the config's own spec too and mutates the site of the same shape (mutate_ops.apply_like).
What each mutant became is written to `<log>/<family>.<id>.json` (the site, the line before and
the lines after, the number of sites; for a canonical mutant, whether the engine's own canonical
parser accepts the mutated text: the `lower` request), which kemit_mutate reads back.
"""
import argparse
import hashlib
import json
import os
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutate_ops  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "numerics"))
from module_source import EngineWorker  # noqa: E402


def canonical_parses(engine, text, flavor):
    """None when the engine's canonical parser reads the mutated text, else its error."""
    answer = engine.ask({"id": 0, "op": "lower", "canonical": text, "flavors": [flavor]})
    return None if answer.get("status") == "ok" else answer.get("error", "no error text")


def section_text(answer, section):
    if section == mutate_ops.CANONICAL:
        return answer.get("canonical")
    return (answer.get("ll", {}).get(section) or {}).get("text")


def mutate_answer(engine, mutant, request, answer, wave_sizes):
    """The engine's emit answer with the mutant's section changed, and the record of the change
    (with the processor's wave size and the text's largest workgroup: a barrier of a one-wave
    workgroup orders nothing)."""
    section = mutant["section"]
    record = {"family": request.get("family"), "id": request.get("config"), "section": section, "operator": mutant["operator"],
              "k": mutant["k"], "spec": request.get("spec")}
    if answer.get("status") != "ok":
        record["change"] = None
        record["engine"] = answer.get("status")
        return answer, record
    text = section_text(answer, section)
    if text is None:
        record["change"] = None
        return answer, record
    if request.get("spec") == mutant["spec"]:
        mutated, change = mutate_ops.apply(section, text, mutant["operator"], mutant["k"])
    else:
        # The lane asked for another spec (the numerics lane's small one): the site is the one
        # that corresponds to the drawn site of the original spec's text.
        original = engine.ask(dict(request, id=0, spec=mutant["spec"]))
        reference = section_text(original, section) if original.get("status") == "ok" else None
        if reference is None:
            mutated, change = mutate_ops.apply(section, text, mutant["operator"], mutant["k"])
        else:
            mutated, change = mutate_ops.apply_like(section, text, mutant["operator"], mutant["k"], reference)
    record["change"] = change
    if change:
        # The text that was mutated, so a reviewed equivalence pins the very module it was shown for.
        change["text_sha256"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        change["wave_size"] = wave_sizes.get(request.get("arch"))
        change["largest_workgroup"] = mutate_ops.largest_workgroup(text)
    if change and section == mutate_ops.CANONICAL:
        flavor = next(iter(answer.get("ll", {})), "llvm22")
        record["invalid"] = canonical_parses(engine, mutated, flavor)
    if section == mutate_ops.CANONICAL:
        answer["canonical"] = mutated
    else:
        answer["ll"][section]["text"] = mutated
    return answer, record


def serve(args):
    with open(args.mutants, "rb") as handle:
        raw = handle.read()
    digest = hashlib.sha256(raw).hexdigest()
    mutants = json.loads(raw)["mutants"]
    by_config = {(m["family"], m["id"]): m for m in mutants}
    engine = EngineWorker(shlex.split(args.engine_cmd), None)
    wave_sizes = {}  # arch -> wave size, from the engine's hello (the lane asks it first)
    log = args.log or os.path.join(os.path.dirname(os.path.abspath(args.mutants)), "applied", args.lane)
    os.makedirs(log, exist_ok=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            sys.stdout.write(json.dumps({"id": None, "status": "error", "error": "the request is not a JSON object"}) + "\n")
            sys.stdout.flush()
            continue
        # The engine answers under its own ids; the lane gets its request's id back.
        answer = dict(engine.ask(request), id=request.get("id"))
        if request.get("op") == "hello" and answer.get("status") == "ok":
            answer["engine"] = f"mutants-of-{answer.get('engine', '')}"
            answer["mutants"] = {"sha256": digest, "lane": args.lane}
            wave_sizes = {facts.get("name"): facts.get("wave_size") for facts in answer.get("arch_facts", [])}
        elif request.get("op", "emit") == "emit":
            mutant = by_config.get((request.get("family"), request.get("config")))
            if mutant is not None:
                answer, record = mutate_answer(engine, mutant, request, answer, wave_sizes)
                path = os.path.join(log, f"{mutant['family']}.{mutant['id']}.json")
                with open(path + ".tmp", "w", encoding="utf-8") as handle:
                    json.dump(record, handle)
                os.replace(path + ".tmp", path)
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
    engine.close()
    return 0


def main():
    parser = argparse.ArgumentParser(description="serve an engine's answers with one mutation per mutant config")
    parser.add_argument("--serve", action="store_true", required=True)
    parser.add_argument("--mutants", required=True, help="the mutants file kemit_mutate wrote")
    parser.add_argument("--lane", required=True, help="the lane this worker serves (names its log folder)")
    parser.add_argument("--engine-cmd", required=True, help="the real engine worker's command")
    parser.add_argument("--log", help="where to write what each mutant became (default: beside the mutants file)")
    return serve(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
