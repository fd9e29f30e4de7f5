#!/usr/bin/env bash
# junit-digest.sh DIR: one paragraph per failed spec in the Ginkgo JUnit reports under DIR (its
# name and its failure message, cut at 1,200 characters), so that the end of a CI log says why a
# suite failed even when only its tail is kept; then, from the step logs in DIR/ci-logs, each
# failed go test (--- FAIL) with the lines after it, which no JUnit report holds (the gotest
# example runs as a plain go test). Prints nothing when nothing failed.
set -o errexit -o nounset -o pipefail
dir=${1:?usage: junit-digest.sh DIR}
[ -d "$dir" ] || exit 0
find "$dir" -name junit.xml -type f -print0 | sort -z | while IFS= read -r -d '' f; do
  awk -v file="${f#"$dir"/}" '
    function unxml(s) {
      gsub(/&#xA;/, " | ", s); gsub(/&#34;|&quot;/, "\"", s); gsub(/&#39;|&apos;/, "'"'"'", s)
      gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s); gsub(/&amp;/, "\\&", s); return s
    }
    /<testcase / { match($0, /name="[^"]*"/); name = unxml(substr($0, RSTART + 6, RLENGTH - 7)) }
    /<failure message="/ {
      match($0, /message="[^"]*"/); msg = unxml(substr($0, RSTART + 9, RLENGTH - 10))
      if (length(msg) > 1200) msg = substr(msg, 1, 1200) " …"
      printf "FAILED (%s) %s\n    %s\n", file, name, msg
    }' "$f"
done
if [ -d "$dir/ci-logs" ]; then
  for f in "$dir"/ci-logs/*.log; do
    [ -e "$f" ] || continue
    grep -n -A4 -E '^[[:space:]]*--- FAIL: ' "$f" | cut -c1-600 | head -40 | sed "s|^|FAILED (ci-logs/$(basename "$f")) |" || true
  done
fi
