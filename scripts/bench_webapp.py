"""`scripts/bench webapp`: how fast the web app shows the Month screen of a ledger with
100,000 expenses, in headless Chromium, against a release `tally serve` on 127.0.0.1.

- webapp_month_ready: milliseconds from navigation start until the Month screen is rendered
  with its handlers attached (the app's `tally:screen-ready` mark), with a cold browser cache,
  median of RUNS. Baseline, same run: a static page of the same number of bytes, served from
  127.0.0.1 by Python's http.server, until its load event.
- webapp_cold_bytes: bytes transferred by that cold load (page, assets and API answers).

Usage: bench_webapp.py TALLY_BINARY (EXPENSES, RUNS from the environment)."""

import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "Tests", "Browser"))
import tally_fixture as fixture  # noqa: E402

EXPENSES = int(os.environ.get("EXPENSES", "100000"))
RUNS = int(os.environ.get("RUNS", "7"))
MONTH = "2025-06"


def cold_load(driver, url, until):
    """Navigates with an empty cache; returns (milliseconds, bytes transferred)."""
    driver.execute_cdp_cmd("Network.clearBrowserCache", {})
    driver.get(url)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        value = driver.execute_script(until)
        if value is not None:
            transferred = driver.execute_script("""
                const entries = [...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource')];
                return entries.reduce((sum, e) => sum + (e.transferSize || e.encodedBodySize || 0), 0);""")
            return float(value), int(transferred)
        time.sleep(0.01)
    raise RuntimeError(f"{url} did not get ready in 60 s")


def main():
    binary = sys.argv[1]
    root = tempfile.mkdtemp(prefix="tally-bench-webapp-")
    tally = fixture.Tally(binary, root, "bench")
    # The synthetic ledger writes each expense, then updates it 4 times: 5 events per expense.
    # tally-debug, the test suite's load generator, is built beside tally.
    debug = os.path.join(os.path.dirname(binary), "tally-debug")
    subprocess.run([debug, "bulk-load", "--count", str(EXPENSES * 5 + 20), "--data-dir", tally.dir], check=True, capture_output=True, timeout=600)
    token = tally.token("bench", "read")
    started = time.monotonic()
    tally.start()
    while True:  # the views catch up with the log after start
        session = tally.api(token, "GET", "/v1/session")[1]
        if session["projectedIndex"] >= session["appendedIndex"]:
            break
        time.sleep(0.5)
    caught_up = time.monotonic() - started
    status, page = tally.api(token, "GET", "/v1/summary/months")
    count = sum(m["count"] for m in page["items"])
    print(f"ledger: {count:,} expenses over {len(page['items'])} months; the views had caught up {caught_up:.1f} s after start")

    driver = fixture.chromium(1280, 800)
    try:
        # The token goes into this origin's sessionStorage first (as the sign-in form puts it).
        driver.get(tally.url + "/")
        driver.execute_script("sessionStorage.setItem('tally.token', arguments[0])", token)
        app = []
        for _ in range(RUNS):
            driver.get("about:blank")
            app.append(cold_load(driver, f"{tally.url}/#/month/{MONTH}",
                                 "const m = performance.getEntriesByName('tally:screen-ready')[0]; return m ? m.startTime : null"))
        app_bytes = app[-1][1]

        # The baseline: a static page of the same size (text in paragraphs), from 127.0.0.1.
        static_root = os.path.join(root, "static")
        os.makedirs(static_root)
        paragraph = "<p>" + "Tally static baseline page text. " * 30 + "</p>\n"
        body = "<!doctype html><html lang=en><head><meta charset=utf-8><title>static</title></head><body>\n"
        while len(body) < app_bytes:
            body += paragraph
        with open(os.path.join(static_root, "index.html"), "w") as f:
            f.write(body[:app_bytes] + "</body></html>")
        handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=static_root, **k)
        http.server.SimpleHTTPRequestHandler.log_message = lambda *a: None
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        static = []
        for _ in range(RUNS):
            driver.get("about:blank")
            static.append(cold_load(driver, f"http://127.0.0.1:{server.server_port}/index.html",
                                    "const n = performance.getEntriesByType('navigation')[0]; return n && n.loadEventEnd > 0 ? n.loadEventEnd : null"))
        server.shutdown()
    finally:
        driver.quit()
        tally.stop()

    app_ms = statistics.median(ms for ms, _ in app)
    static_ms = statistics.median(ms for ms, _ in static)
    print(f"webapp_month_ready      {app_ms:8.0f} ms   (runs: {', '.join(f'{ms:.0f}' for ms, _ in app)}; goal ≤ 1000 ms)")
    print(f"static page, same size  {static_ms:8.0f} ms   (runs: {', '.join(f'{ms:.0f}' for ms, _ in static)}); ratio {app_ms / static_ms:.1f}×")
    print(f"webapp_cold_bytes       {app_bytes:8,d} B    (goal ≤ 300 KB)")
    for row in [{"bench": "webapp_month_ready", "value": round(app_ms, 1), "unit": "ms", "baseline": round(static_ms, 1), "ratio": round(app_ms / static_ms, 2)},
                {"bench": "webapp_cold_bytes", "value": app_bytes, "unit": "bytes", "baseline": None, "ratio": None}]:
        print(json.dumps(row))


if __name__ == "__main__":
    main()
