#!/usr/bin/env python3
"""Summarises ACLNN_CONVBWD_VERBOSE=2 output of the suite (docs/architecture.md, "Verbose mode").

Reads the output of
  ACLNN_CONVBWD_ISA=avx512 ACLNN_CONVBWD_VERBOSE=2 SUITE_HASHES_SCALE=full SUITE_HASHES_PRINT=1 \
      build/release/tests/test_suite_hashes --gtest_filter=SuiteHashes.EveryInstructionSetGivesTheCommittedBits
on stdin and prints, for each FLOAT layer and each operator called on it, every result's pass, the entry
chosen, the entries of that pass's list that refused it first and what the entry decided, then the step
line; then a table of
every refusal reason with the layers that met it.
"""
import re
import sys

PREFIX = "aclnn_convbwd_verbose,"


def main():
    layers = []  # (name, [lines])
    pending = []
    reasons = {}  # (entry, reason) -> [layers]
    for raw in sys.stdin:
        line = raw.rstrip("\n")
        if line.startswith(PREFIX):
            pending.append(line[len(PREFIX):])
            continue
        words = line.split()
        if len(words) >= 3 and words[2] == "float" and pending:
            layers.append((words[1], pending))
        if len(words) >= 3:
            pending = []
    for name, lines in layers:
        print(name)
        for line in lines:
            fields = line.split(",")
            if fields[0] == "plan":
                api, result, pass_name, chosen, refusals = fields[1], fields[4], fields[5], fields[6], fields[7]
                decided = fields[8] if len(fields) > 8 else ""
                refused = [r.split(": ", 1) for r in refusals.split("; ")] if refusals else []
                after = "  after " + ", ".join(r[0] for r in refused) if refused else ""
                print(f"  {api:24} {result:10} {pass_name:15} {chosen:20}{after}".rstrip())
                if decided:
                    print(f"  {'':24} {'':10} {'':15} decided: {decided}")
                for entry, reason in refused:
                    layers_of = reasons.setdefault((pass_name, entry, reason), [])
                    if name not in layers_of:
                        layers_of.append(name)
            else:
                steps = re.sub(r":isa=[a-z0-9]+", "", fields[4])
                print(f"  {fields[1]:24} exec {steps}")
    print()
    print("| pass | entry | its reason | layers |")
    print("|---|---|---|---|")
    for (pass_name, entry, reason), names in reasons.items():
        print(f"| {pass_name} | `{entry}` | {reason} | {', '.join(names)} |")


if __name__ == "__main__":
    main()
