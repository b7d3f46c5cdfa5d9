# Shared helpers of the compare scripts (sourced after bench-lib.sh).

# compare_bin REF: print the path of a pds binary for REF, which is either
# an executable file or a git revision (built once into var/compare from a
# temporary worktree of that revision).
compare_bin() {
  local ref=$1 rev out src
  if [ -f "$ref" ] && [ -x "$ref" ]; then
    echo "$ref"
    return
  fi
  rev=$(git rev-parse --verify --quiet "$ref^{commit}") || {
    echo "compare: $ref is neither an executable file nor a git revision" >&2
    exit 2
  }
  out="var/compare/pds-${rev:0:12}"
  if [ ! -x "$out" ]; then
    mkdir -p var/compare
    src=$(mktemp -d "$PWD/var/compare/src-XXXX")
    git worktree add --quiet --detach "$src" "$rev"
    if ! (cd "$src" && go build -o "$OLDPWD/$out" ./cmd/pds); then
      git worktree remove --force "$src"
      echo "compare: building pds at $ref failed" >&2
      exit 1
    fi
    git worktree remove --force "$src"
  fi
  echo "$out"
}

# median: the median of the numbers on stdin, one a line.
median() {
  sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
