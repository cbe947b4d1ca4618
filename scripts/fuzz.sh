#!/usr/bin/env bash
# Runs the fuzz targets of the module for the given time each (default 5s).
#
# Usage: scripts/fuzz.sh [fuzztime] [all|smoke]
#
# Targets: the hand-written ones (spec parser, replay reader, serdes, ...) and
# the decoder fuzz target streamgen generates for every record
# (Fuzz<Record>Decode in streamgen_records_test.go), in every committed
# package. `all` (make fuzz) runs every one. `smoke` (make test) runs the
# hand-written ones and the generated ones of gen/testdata/alltypes, whose
# records hold every field type: the other generated decoders come from the
# same generator code, and fuzzing each of them on every test run would add
# minutes for little.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${1:-5s}
mode=${2:-all}
case $mode in
all | smoke) ;;
*)
	echo "fuzz.sh: mode $mode: want all or smoke" >&2
	exit 2
	;;
esac
# fuzz_one runs one target. Go's fuzzing engine can end a run that found
# nothing with "context deadline exceeded" when a worker is still busy as the
# fuzz time ends (it happens on a loaded machine); such a run wrote no failing
# input, so it is run once more. A real failure always writes its input under
# testdata/fuzz ("Failing input written to ...") and fails at once.
fuzz_one() {
	local out
	if out=$(go test -run='^$' -fuzz="^${2}\$" -fuzztime="$fuzztime" "$1" 2>&1); then
		printf '%s\n' "$out"
		return 0
	fi
	printf '%s\n' "$out"
	if [[ $out == *"context deadline exceeded"* && $out != *"Failing input written"* ]]; then
		echo "fuzz: $1 $2 ended on the fuzzing engine's deadline without a failing input; running it again"
		go test -run='^$' -fuzz="^${2}\$" -fuzztime="$fuzztime" "$1"
		return
	fi
	return 1
}

count=0
while IFS= read -r line; do
	pkg=${line%% *}
	target=${line#* }
	echo "fuzz: $pkg $target ($fuzztime)"
	fuzz_one "$pkg" "$target"
	count=$((count + 1))
done < <(git ls-files '*_test.go' | grep -v '^conformance/java/' | sort | while read -r f; do
	dir=$(dirname "$f")
	if [[ $mode == smoke && $(basename "$f") == streamgen_*_test.go && $dir != gen/testdata/alltypes ]]; then
		continue
	fi
	{ grep -o '^func Fuzz[A-Za-z0-9_]*' "$f" || true; } | sed 's/^func //' | while read -r fn; do
		echo "./$dir $fn"
	done
done)
if [ "$count" -eq 0 ]; then
	echo "fuzz: no fuzz targets found" >&2
	exit 1
fi
echo "fuzz: $count targets ($mode) ran without a crash"
