# Shared helpers of the bench scripts (sourced, not run).
set -euo pipefail

# need CMD PACKAGE: install a Debian package when its command is missing.
need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "bench: installing $2" >&2
    if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
    $SUDO apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$2" >/dev/null
  fi
}

# machine: one line describing this machine.
machine() {
  local cpu
  cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
  echo "$(nproc) cores ($cpu), $(free -g | awk '/Mem:/{print $2}') GiB RAM, $(go version | cut -d' ' -f3), $(uname -sr)"
}

# write_section NAME FILE: replace the section between the NAME markers in
# BENCHMARKS.md with FILE's content (appending the markers when absent).
write_section() {
  local name=$1 file=$2 md=BENCHMARKS.md
  local start="<!-- $name:start -->" end="<!-- $name:end -->"
  if ! grep -qF "$start" "$md"; then
    printf '\n%s\n%s\n' "$start" "$end" >> "$md"
  fi
  awk -v s="$start" -v e="$end" -v f="$file" '
    $0 == s { print; while ((getline line < f) > 0) print line; skip = 1; next }
    $0 == e { skip = 0 }
    !skip { print }' "$md" > "$md.tmp" && mv "$md.tmp" "$md"
}

# wait_port HOST:PORT: wait until something listens there (30 s at most).
wait_port() {
  local hp=$1
  for _ in $(seq 1 300); do
    if (exec 3<>"/dev/tcp/${hp%:*}/${hp##*:}") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "bench: nothing listens on $hp" >&2
  return 1
}

# wrk_run LABEL CONNS DURATION [wrk args…]: run wrk with bench/wrk-paths.lua
# and print "LABEL rps=… p50_us=… p99_us=…".
wrk_run() {
  local label=$1 conns=$2 dur=$3; shift 3
  local out
  out=$(wrk -t1 -c"$conns" -d"$dur" --latency -s bench/wrk-paths.lua "$@" | grep '^RESULT')
  echo "$label ${out#RESULT }"
}

# field NAME LINE: the value of NAME=… in LINE.
field() { sed -n "s/.*[ ]$1=\([^ ]*\).*/\1/p" <<<" $2"; }

# peak RSS in MiB and wall seconds of a command: sets RSS_MB and WALL_S.
measure() {
  local tf
  tf=$(mktemp)
  /usr/bin/time -f '%e %M' -o "$tf" "$@"
  read -r WALL_S rss_kb < "$tf"
  RSS_MB=$((rss_kb / 1024))
  rm -f "$tf"
}
