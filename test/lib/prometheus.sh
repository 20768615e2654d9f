# SPDX-License-Identifier: GPL-2.0
# test/lib/prometheus.sh - Debian's Prometheus server (unpacked by
# scripts/setup into .cache/prometheus, not installed) in the test guest,
# scraping gpreemptctl's metrics endpoint every second
# (test/vm/sim-prometheus.sh, test/vm/oci-cdi.sh).

PROM=${GP_CACHE:-$PWD/.cache}/prometheus/usr/bin/prometheus

# prom_start DIR TARGET PORT: the server on 127.0.0.1:PORT, its config,
# database and log under DIR, scraping TARGET (host:port) as job
# "gpreempt"; PROM_PORT and PROM_PID set.  Returns 1 when the target is not
# up within 120 s.
prom_start() {
	PROM_PORT=$3
	cat >"$1/prometheus.yml" <<CONF
global: { scrape_interval: 1s, evaluation_interval: 1s }
scrape_configs:
- job_name: gpreempt
  static_configs: [ { targets: ["$2"] } ]
CONF
	$PROM --config.file="$1/prometheus.yml" --storage.tsdb.path="$1/tsdb" \
		--web.listen-address=127.0.0.1:$PROM_PORT --log.level=warn >"$1/prom.log" 2>&1 &
	PROM_PID=$!
	wait_for 120 prom_up
}

# prom_up: the gpreempt target's last scrape succeeded.
prom_up() { [ "$(q 'up{job="gpreempt"}')" = 1 ]; }

# q EXPR: the value of an instant PromQL query (a scalar's, or the first
# sample's of a vector), "" if none.
q() {
	python3 - "$1" "$PROM_PORT" <<'PY'
import json, sys, urllib.parse, urllib.request
u = "http://127.0.0.1:%s/api/v1/query?%s" % (sys.argv[2], urllib.parse.urlencode({"query": sys.argv[1]}))
try:
    r = json.load(urllib.request.urlopen(u, timeout=10))
except Exception as e:
    sys.exit("query failed: %s" % e)
d = r.get("data", {})
res = d.get("result", [])
if d.get("resultType") == "scalar":
    print(res[1])
elif res:
    print(res[0]["value"][1])
PY
}

# prom_stop DIR: the server stopped; its errors, if any, as diagnostics.
prom_stop() {
	kill -TERM "$PROM_PID" 2>/dev/null
	wait "$PROM_PID" 2>/dev/null
	grep -iE 'level=(error|fatal)' "$1/prom.log" | head -5 | sed 's/^/# prometheus: /'
}
