"""A live `tally serve` for the browser tests and the web app benchmark: a fresh data
directory on 127.0.0.1, its tokens, a household's worth of data seeded through the CLI
(two replicas that exchanged bundles, so the views hold a merged duplicate category and a
journaled conflict), and a Chromium driven by Selenium."""

import datetime
import json
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
import urllib.request
import zlib

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Tally:
    """One replica's data directory and, once started, its service."""

    def __init__(self, binary, root, name, hosted_in=None):
        """A new replica `name` in `root`; or (`hosted_in`: a folder of ledgers) a hosted ledger there."""
        self.binary, self.dir = binary, os.path.join(hosted_in or root, name)
        self.server = None
        if hosted_in:
            subprocess.run([binary, "ledgers", "create", name, "--ledgers", hosted_in], check=True, capture_output=True, timeout=120)
        else:
            self.run("init", "--name", name)

    def run(self, *args, check=True):
        result = subprocess.run([self.binary, *args, "--data-dir", self.dir], capture_output=True, text=True, timeout=120)
        if check and result.returncode != 0:
            raise RuntimeError(f"tally {' '.join(args)} failed: {result.stderr}")
        return result.stdout.strip()

    def token(self, name, scopes):
        return self.run("token", "create", "--name", name, "--scope", scopes)

    def member(self, name, role, password):
        result = subprocess.run([self.binary, "members", "add", name, "--role", role, "--data-dir", self.dir],
                                input=password + "\n", capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise RuntimeError(f"tally members add {name} failed: {result.stderr}")

    def start(self, hosting=None):
        """Serves this data directory, or (`hosting`: a folder of ledgers) every ledger of a folder."""
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(os.path.join(os.path.dirname(self.dir), f"serve-{self.port}.log"), "w")
        source = ["--ledgers", hosting] if hosting else ["--data-dir", self.dir]
        self.server = subprocess.Popen([self.binary, "serve", *source, "--host", "127.0.0.1", "--port", str(self.port)],
                                       stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=2) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("tally serve did not become healthy in 60 s")

    def stop(self):
        if self.server:
            self.server.terminate()
            self.server.wait(timeout=30)
            self.log.close()

    def api(self, token, method, path, body=None):
        """Calls the API; returns (status, parsed JSON or None)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method, headers={"Authorization": f"Bearer {token}"})
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                text = response.read()
                return response.status, json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            text = error.read()
            return error.code, json.loads(text) if text else None


def today():
    return datetime.date.today()


def png(path, width=64, height=48, rgb=(200, 80, 40)):
    """Writes a small real PNG (a receipt photo stand-in)."""
    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
    return path


def seed_household(root, binary):
    """Two replicas that worked apart and exchanged bundles; returns the home replica (not
    started) and what was made: ids of categories, an expense with a conflict, a challenge."""
    home, phone = Tally(binary, root, "home"), Tally(binary, root, "phone")
    month = today().strftime("%Y-%m")
    food = home.run("category", "add", "--name", "Food", "--icon", "🍚")
    lunch = home.run("category", "add", "--name", "Lunch", "--parent", food)
    transport = home.run("category", "add", "--name", "Transport", "--icon", "🚌")
    salary = home.run("category", "add", "--name", "Salary", "--kind", "income")
    phone.run("category", "add", "--name", "Food")  # made apart: a duplicate the views merge
    day = lambda n: (today().replace(day=1) + datetime.timedelta(days=n)).isoformat()
    first = home.run("expense", "add", "--amount", "9500", "--category", lunch, "--payee", "김밥천국", "--payment", "card",
                     "--date", day(min(2, today().day - 1)), "--tag", "weekday")
    home.run("expense", "add", "--amount", "54000", "--category", food, "--payee", "Mart", "--payment", "card", "--date", day(0))
    home.run("expense", "add", "--amount", "1450", "--category", transport, "--payee", "Bus", "--payment", "transit card", "--date", day(0))
    home.run("expense", "add", "--kind", "income", "--amount", "3200000", "--category", salary, "--payee", "Employer", "--payment", "transfer",
             "--date", day(0))
    home.run("expense", "add", "--amount", "1250", "--currency", "USD", "--payee", "App store", "--payment", "card", "--date", day(0))
    for months_back, amount in [(1, 410000), (2, 380000), (3, 450000)]:
        earlier = (today().replace(day=1) - datetime.timedelta(days=28 * months_back)).replace(day=10)
        home.run("expense", "add", "--amount", str(amount), "--category", food, "--payee", "Mart", "--date", earlier.isoformat())
    home.run("budget", "add", "--category", transport, "--amount", "2000")   # from this month on; under budget
    next_month = (today().replace(day=1) + datetime.timedelta(days=32)).replace(day=15)
    home.run("recurring", "add", "--cadence", "monthly", "--start", next_month.isoformat(), "--amount", "55000", "--payee", "Phone bill",
             "--category", transport)   # starts next month: nothing made yet
    start = (today() - datetime.timedelta(days=4)).isoformat()
    challenge = home.run("todo", "add", "--title", "No-spend day", "--challenge", "--start", start, "--checks", "1,1,0,1,0,0,0,0,0,0,0,0,0,0")
    home.run("todo", "add", "--title", "File the receipts")
    # Exchange, then edit the same expense on both sides apart: the second exchange journals a conflict.
    bundles = os.path.join(root, "bundles")
    def exchange(source, target, name):
        out = os.path.join(bundles, name)
        source.run("segments", "export", "--out", out)
        target.run("segments", "import", out)
    exchange(home, phone, "1")
    exchange(phone, home, "2")
    home.run("expense", "update", first, "--memo", "with a colleague")
    time.sleep(0.01)
    phone.run("expense", "update", first, "--memo", "alone")
    exchange(home, phone, "3")
    exchange(phone, home, "4")
    return home, {"food": food, "lunch": lunch, "transport": transport, "expense": first, "challenge": challenge, "month": month}


def chromium(width=390, height=844, language="en"):
    """A headless Chromium at the given window size and language, with its console log kept."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--window-size={width},{height}",
                     f"--lang={language}", "--force-device-scale-factor=1"]:
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"intl.accept_languages": language})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    # The viewport exactly (a window's size includes the browser's own bars, and headless
    # windows are at least 500 px wide): a phone's is 390×844, touch, mobile layout.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600})
    return driver
