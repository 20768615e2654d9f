#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""llama-load: Poisson requests to a llama-server on loopback.

Each request asks /completion for a fixed number of tokens, greedy
(temperature 0, ignore_eos: a random-weight model would otherwise stop at
any token), streamed, so that the client sees each token as the server
sends it.  Arrivals are a seeded Poisson process (open loop: a request
starts at its arrival time whether or not the one before has finished;
the server's one slot queues them), and a request's times count from its
arrival: time to first token (TTFT) and the mean time per token after the
first (TPOT).  Prints "key value" lines: requests, answered, and p50/p99 of
each in ms; --out writes one JSON line per request.
"""
import argparse
import json
import random
import sys
import threading
import time
import urllib.request


def pct(xs, p):
    """The p-th percentile, nearest rank (p99 of 20 is the largest)."""
    if not xs:
        return -1
    xs = sorted(xs)
    k = max(0, min(len(xs) - 1, -(-len(xs) * p // 100) - 1))
    return xs[int(k)]


def one(args, i, arrival, res):
    body = json.dumps({"prompt": "gpreempt request %d" % i, "n_predict": args.n_predict,
                       "temperature": 0, "ignore_eos": True, "stream": True,
                       "cache_prompt": False}).encode()
    req = urllib.request.Request("http://127.0.0.1:%d/completion" % args.port, data=body,
                                 headers={"Content-Type": "application/json"})
    times = []
    r = {"i": i, "ok": False}
    try:
        with urllib.request.urlopen(req, timeout=args.timeout) as f:
            for line in f:
                line = line.strip()
                if not line.startswith(b"data: "):
                    continue
                d = json.loads(line[6:])
                if d.get("tokens"):
                    times.append(time.monotonic())
                if d.get("stop"):
                    r["ok"] = d.get("tokens_predicted") == args.n_predict
                    break
    except Exception as e:  # a refused or cut connection is an unanswered request
        r["error"] = str(e)
    r["tokens"] = len(times)
    if times:
        r["ttft_ms"] = (times[0] - arrival) * 1e3
        r["lat_ms"] = (times[-1] - arrival) * 1e3
        if len(times) > 1:
            r["tpot_ms"] = (times[-1] - times[0]) * 1e3 / (len(times) - 1)
    res[i] = r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--requests", type=int, default=20)
    ap.add_argument("--gap", type=float, default=1.0, help="mean inter-arrival time, s")
    ap.add_argument("--n-predict", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--out")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    res = [None] * a.requests
    threads = []
    t = time.monotonic()
    for i in range(a.requests):
        t += rng.expovariate(1.0 / a.gap)
        time.sleep(max(0.0, t - time.monotonic()))
        th = threading.Thread(target=one, args=(a, i, t, res))
        th.start()
        threads.append(th)
    for th in threads:
        th.join()
    ok = [r for r in res if r and r["ok"]]
    print("requests %d" % a.requests)
    print("answered %d" % len(ok))
    for k in ("ttft_ms", "tpot_ms", "lat_ms"):
        xs = [r[k] for r in ok if k in r]
        print("%s_p50 %.1f" % (k[:-3], pct(xs, 50)))
        print("%s_p99 %.1f" % (k[:-3], pct(xs, 99)))
    if a.out:
        with open(a.out, "w") as f:
            for r in res:
                f.write(json.dumps(r) + "\n")
    return 0 if len(ok) == a.requests else 1


if __name__ == "__main__":
    sys.exit(main())
