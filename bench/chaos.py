# SPDX-License-Identifier: GPL-3.0-or-later
"""The chaos campaign (issue 42; bench/RESULTS.md "A sweep that survives everything around it").

    sudo .venv/bin/python bench/chaos.py BUILD_DIR [--seed S] [--faults N] [--trials N]
                                         [--trainer-trials N] [--executor slurm|local|both]

Faults *around* a sweep, not of its trials: a sweep of short command trials
(bench/fault_campaign_task.py: sleeps its steps, logs through Orrery's events.jsonl writer,
checkpoints, resumes) and a sweep of bundled-trainer trials (tests/data/micro.yaml) run on the
fixture's Slurm (tests/fixture/localcluster.py), followed by two `sweep watch` per sweep and, with
--monitor and --gui, the terminal monitor (in script(1)'s terminal) and the window (offscreen), while faults are injected at random times from a seeded schedule:

  follower-kill     SIGKILL of a follower, started again 0-2 s later
  follower-stop     SIGSTOP of a follower for longer than its lease (a laptop lid), then SIGCONT
  conn-cut          every SSH connection reset mid-command (a loopback TCP proxy of our own sits
                    between Orrery and the fixture's sshd)
  conn-stall        every connection (and new ones) silent for 3-12 s
  conn-halfclose    every connection's stream to Orrery ended while Orrery's side stays open
  sshd-restart      sshd's listener stopped for 1-4 s and started again (sessions live on)
  slurmctld-restart the controller stopped for 2-10 s and started again
  slurmd-restart    one node's slurmd stopped for 1-3 s (its job steps live on)
  store-full        the local store's disk (a tmpfs the campaign mounts) full for 5-15 s
  cluster-full      the cluster's run directories' disk full for 2-6 s (trials checkpoint every
                    two steps, so some are writing one)
and throughout, the cluster side's clock 5 minutes ahead (libfaketime in the profile's setup lines,
so every trial and its batch script see it).

The same seed's trials also run once without faults ("clean"). After the campaign a last
`sweep watch` follows each sweep to its end and the oracle compares, printing a table:
- every trial that completed in the clean run completed here (trials lost);
- every attempt ran once: each job id a trial's ledger saw is an attempt the store recorded, and
  the controller accepted exactly as many submissions as the store holds arrays (a lost reply
  must not make a second array);
- every step the trials logged to their events.jsonl is in the store once, with the value the file
  wrote last for it (a resumed attempt logs the steps after its checkpoint again: the store keeps
  the last), nothing more (points lost, duplicated); each command trial's curve equals the clean
  run's;
- no orphan: nothing of the sweeps left in Slurm's queue, no trial process alive;
- `orrery db check` passes.
Exit status 0 only when all of that holds.
"""
import argparse
import collections
import heapq
import json
import os
import random
import selectors
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
FIXTURE = [sys.executable, str(ROOT / "tests" / "fixture" / "localcluster.py")]
FAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1")
LEASE_S = 60  # kSweepLeaseTtlMs: a stop longer than this lets another follower take the sweep
KINDS = ["follower-kill", "follower-stop", "conn-cut", "conn-stall", "conn-halfclose", "sshd-restart",
         "slurmctld-restart", "slurmd-restart", "store-full", "cluster-full"]
# How often each kind comes up once every kind has had its turn.
WEIGHTS = {"follower-kill": 6, "follower-stop": 1, "conn-cut": 6, "conn-stall": 2, "conn-halfclose": 3,
           "sshd-restart": 2, "slurmctld-restart": 1, "slurmd-restart": 2, "store-full": 1, "cluster-full": 1}
LOCAL_KINDS = ["follower-kill", "follower-stop", "store-full"]


def log(msg: str) -> None:
    print(f"[chaos {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# --- the TCP proxy -------------------------------------------------------------------------------
class Proxy:
    """127.0.0.1:port → the fixture's sshd, with faults on demand: cut (reset every connection),
    stall (forward nothing for a while, new connections included), half-close (end the stream
    towards the client, keep the rest open). One thread per connection."""

    def __init__(self, target_port: int):
        self.target = ("127.0.0.1", target_port)
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(64)
        self.port = self.server.getsockname()[1]
        self.lock = threading.Lock()
        self.pipes: list[tuple[socket.socket, socket.socket]] = []
        self.stalled_until = 0.0
        self.closing = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closing:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._pipe, args=(client,), daemon=True).start()

    def _pipe(self, client: socket.socket) -> None:
        while time.monotonic() < self.stalled_until:
            time.sleep(0.05)
        try:
            upstream = socket.create_connection(self.target, timeout=5)
            upstream.settimeout(None)
        except OSError:
            client.close()  # sshd down: the client sees the connection closed, as with no proxy
            return
        pair = (client, upstream)
        with self.lock:
            self.pipes.append(pair)
        sel = selectors.DefaultSelector()
        sel.register(client, selectors.EVENT_READ, upstream)
        sel.register(upstream, selectors.EVENT_READ, client)
        open_ends = 2
        try:
            while open_ends:
                if time.monotonic() < self.stalled_until:
                    time.sleep(0.05)
                    continue
                for key, _ in sel.select(0.1):
                    src, dst = key.fileobj, key.data
                    data = src.recv(65536)
                    if not data:
                        sel.unregister(src)
                        open_ends -= 1
                        try:
                            dst.shutdown(socket.SHUT_WR)
                        except OSError:
                            pass
                        continue
                    dst.sendall(data)
        except OSError:
            pass
        finally:
            with self.lock:
                if pair in self.pipes:
                    self.pipes.remove(pair)
            for s in pair:
                s.close()

    def _each(self, fn) -> int:
        with self.lock:
            pairs = list(self.pipes)
        for pair in pairs:
            try:
                fn(*pair)
            except OSError:
                pass
        return len(pairs)

    def cut(self) -> int:
        def reset(client, upstream):
            for s in (client, upstream):
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
                s.shutdown(socket.SHUT_RDWR)
        return self._each(reset)

    def stall(self, seconds: float) -> int:
        self.stalled_until = time.monotonic() + seconds
        with self.lock:
            return len(self.pipes)

    def half_close(self) -> int:
        return self._each(lambda client, upstream: client.shutdown(socket.SHUT_WR))

    def close(self) -> None:
        self.closing = True
        self.server.close()
        self.cut()


# --- small filesystems ---------------------------------------------------------------------------
class SmallDisk:
    """A tmpfs of its own, filled to the last byte on demand (a write-failure shim would only be
    a stand-in; where mounting is not allowed the disk-full faults are left out, and said so)."""

    def __init__(self, path: Path, size_mb: int):
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m,mode=0755", "tmpfs", str(path)],
                           capture_output=True, text=True)
        self.mounted = r.returncode == 0
        self.why = r.stderr.strip()
        self.filler = path / ".chaos-filler"

    def fill(self) -> None:
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            st = os.statvfs(self.path)
            free = st.f_bavail * st.f_frsize
            if free > 0:
                try:
                    os.posix_fallocate(fd, 0, os.fstat(fd).st_size + free)
                except OSError:
                    pass
            try:  # the last pages fallocate may leave
                while os.write(fd, b"\0" * 4096):
                    pass
            except OSError:
                pass
        finally:
            os.close(fd)

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)

    def unmount(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True)


# --- followers -----------------------------------------------------------------------------------
def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


class Follower:
    def __init__(self, name: str, argv: list[str], env: dict[str, str], log_path: Path):
        self.name, self.argv, self.env, self.log_path = name, argv, env, log_path
        self.proc: subprocess.Popen | None = None
        self.signalled = False  # we killed it: not a crash
        self.stopped = False
        self.crashes: list[str] = []
        self.done = False  # exited 0: its sweep ended

    def start(self) -> None:
        out = open(self.log_path, "ab")
        out.write(f"\n--- start {time.strftime('%H:%M:%S')}\n".encode())
        self.proc = subprocess.Popen(self.argv, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        out.close()
        self.signalled = False

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig: int) -> None:
        """To the process and its children (the monitor runs under script(1) for a terminal)."""
        if self.alive():
            if sig == signal.SIGKILL:
                self.signalled = True
            for pid in [self.proc.pid] + children(self.proc.pid):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass

    def reap(self) -> None:
        """Notes how it ended when it did: 0 (its sweep ended), our SIGKILL, or a crash."""
        if self.proc is None or self.proc.poll() is None:
            return
        rc = self.proc.returncode
        if rc == 0:
            self.done = True
        elif not self.signalled:
            tail = self.log_path.read_text(errors="replace").splitlines()[-6:]
            self.crashes.append(f"{self.name} exited {rc}: " + " | ".join(tail))
        self.proc = None


# --- one world: a store, a cluster profile, its sweeps -------------------------------------------
class World:
    def __init__(self, name: str, a, work: Path, fixture: dict[str, str], proxy_port: int | None,
                 local: bool, faults: bool):
        self.name, self.a, self.fixture, self.local, self.faults = name, a, fixture, local, faults
        self.dir = work / name
        self.dir.mkdir(parents=True)
        self.cli = str(Path(a.build).resolve() / "bin" / "orrery")
        self.gui = str(Path(a.build).resolve() / "bin" / "orrery-gui")
        self.trainer = str(Path(a.build).resolve() / "bin" / "orrery-train")
        self.store_disk = SmallDisk(self.dir / "store", 256) if faults else None
        store_dir = self.store_disk.path if self.store_disk else self.dir / "store"
        store_dir.mkdir(exist_ok=True)
        self.db = store_dir / "orrery.sqlite"
        self.remote = self.dir / "remote"
        self.remote_disk = SmallDisk(self.remote, 512) if faults and not local else None
        self.remote.mkdir(exist_ok=True)
        self.home = self.dir / "home"
        self.home.mkdir()
        self.followers: list[Follower] = []
        self.sweeps: list[str] = []
        self.proxy_port = proxy_port

    def env(self) -> dict[str, str]:
        e = dict(os.environ)
        e.update(HOME=str(self.home), XDG_CONFIG_HOME=str(self.home / ".config"),
                 XDG_DATA_HOME=str(self.home / ".local/share"), XDG_CACHE_HOME=str(self.home / ".cache"),
                 ORRERY_DB=str(self.db), QT_QPA_PLATFORM="offscreen")
        return e

    def orrery(self, *args: str, check: bool = True, timeout: float = 600) -> subprocess.CompletedProcess:
        r = subprocess.run([self.cli, *args], env=self.env(), capture_output=True, text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise RuntimeError(f"{self.name}: orrery {' '.join(args)}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        return r

    def add_cluster(self) -> None:
        if self.local:
            return
        f = self.fixture
        port = str(self.proxy_port) if self.proxy_port else f["ORRERY_TEST_SSH_PORT"]
        # The host key, known under the proxy's port (known_hosts entries name the port).
        known = self.dir / "known_hosts"
        known.write_text(Path(f["ORRERY_TEST_SSH_KNOWN_HOSTS"]).read_text().replace(
            f"]:{f['ORRERY_TEST_SSH_PORT']} ", f"]:{port} "))
        args = ["cluster", "add", "chaos", "--host", f["ORRERY_TEST_SSH_HOST"], "--port", port,
                "--user", f["ORRERY_TEST_SSH_USER"], "--identity", f["ORRERY_TEST_SSH_KEY"],
                "--known-hosts", str(known), "--remote-root", str(self.remote),
                "--partition", "gpu", "--trainer-path", self.trainer]
        if self.faults and FAKETIME.exists():
            args += ["--setup", f"export LD_PRELOAD={FAKETIME} FAKETIME=+5m"]
        self.orrery(*args)

    def specs(self) -> list[Path]:
        a = self.a
        code = self.dir / "code"  # the user's project: the task and Orrery's events writer beside it
        code.mkdir()
        # task.py finds the writer at ../resources/python, as in this repository.
        (code / "bench").mkdir()
        (code / "resources" / "python").mkdir(parents=True)
        shutil.copy(HERE / "fault_campaign_task.py", code / "bench" / "task.py")
        shutil.copy(ROOT / "resources" / "python" / "orrery_events.py", code / "resources" / "python")
        lrs = [round(1e-3 * (1 + i), 6) for i in range(a.trials)]
        resources = {"nodes": 1, "cpus_per_task": 1, "mem": "200M", "time": "00:20:00"}
        out = []
        cmd = {
            "name": f"chaos-cmd-{self.name}", "experiment": "chaos",
            "command": ["python3", "bench/task.py", "--steps", str(a.steps), "--step-seconds",
                        str(a.step_seconds), "--checkpoint-every", "2", "--lr", "{{lr}}"],
            "workdir": str(code), "method": "grid", "parameters": {"lr": {"values": lrs}},
            "metric": {"name": "train/loss", "goal": "minimize"}, "max_concurrent": a.concurrent,
            "retries": 4, "hang_timeout": "60s",
        }
        if not self.local:
            cmd["resources"] = resources
        out.append(cmd)
        if a.trainer_trials:
            tr = {
                "name": f"chaos-trainer-{self.name}", "experiment": "chaos",
                "trainer": {"config": str(ROOT / "tests" / "data" / "micro.yaml")}, "method": "grid",
                "parameters": {"optim.lr": {"values": [round(1e-3 * (1 + i), 6) for i in range(a.trainer_trials)]},
                               "train.steps": {"value": 12}, "train.ckpt_every": {"value": 4}},
                "metric": {"name": "train/loss", "goal": "minimize"}, "max_concurrent": 2, "retries": 4,
            }
            if not self.local:
                tr["resources"] = resources | {"mem": "1G"}
            out.append(tr)
        paths = []
        for spec in out:
            p = self.dir / f"{spec['name']}.yaml"
            p.write_text(json.dumps(spec, indent=1))  # JSON is YAML
            paths.append(p)
            self.sweeps.append(spec["name"])
        return paths

    def submit(self) -> None:
        self.add_cluster()
        for spec in self.specs():
            args = ["sweep", "submit", str(spec)] + ([] if self.local else ["--cluster", "chaos"])
            self.orrery(*args)

    def start_followers(self, gui: bool, monitor: bool) -> None:
        for sweep in self.sweeps:
            for i in range(self.a.followers):
                f = Follower(f"watch-{sweep}-{i}", [self.cli, "sweep", "watch", sweep, "--pace", "0.5,2"],
                             self.env(), self.dir / f"watch-{sweep}-{i}.log")
                f.start()
                self.followers.append(f)
        if monitor:  # the terminal monitor, in a terminal of its own (script(1))
            env = self.env() | {"TERM": "xterm", "COLUMNS": "160", "LINES": "50"}
            f = Follower("monitor", ["script", "-qfec", f"{self.cli} monitor --refresh 1", "/dev/null"], env,
                         self.dir / "monitor.log")
            f.start()
            self.followers.append(f)
        if gui and Path(self.gui).exists():
            f = Follower("window", [self.gui, "--db", str(self.db)], self.env(), self.dir / "window.log")
            f.start()
            self.followers.append(f)

    # -- reading the store (read-only, as a second process would) --
    def query(self, sql: str, *args) -> list[tuple]:
        try:
            db = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=10)
        except sqlite3.OperationalError:
            return []
        try:
            return db.execute(sql, args).fetchall()
        except sqlite3.OperationalError:
            return []
        finally:
            db.close()

    def known(self) -> tuple[int, int]:
        """What the store knows: metric points (one per step of a series), trials completed."""
        pts = self.query("SELECT total(count) FROM metric_chunks")
        done = self.query("SELECT count(DISTINCT sweep_id || ':' || trial_index) FROM trials WHERE state = 'completed'")
        return (int(pts[0][0]) if pts else 0, done[0][0] if done else 0)

    def truth(self) -> tuple[int, int]:
        """What the trials' own files say: steps logged per series, trials whose exit.json says completed."""
        points = done = 0
        for (d,) in self.query("SELECT DISTINCT run_dir FROM trials WHERE run_dir != ''"):
            points += sum(len({step for step, _ in v}) for v in file_points(Path(d)).values())
            try:
                done += json.loads((Path(d) / "exit.json").read_text()).get("state") == "completed"
            except (OSError, ValueError):
                pass
        return points, done

    def active(self) -> int:
        rows = self.query("SELECT count(*) FROM sweeps WHERE state IN ('running', 'pending', 'cancelling')")
        return rows[0][0] if rows else 1

    def trials(self, sweep: str) -> list[dict]:
        rows = self.query(
            "SELECT t.trial_index, t.attempt, t.state, t.exit_reason, t.task, t.run_dir, r.run_uuid "
            "FROM trials t JOIN sweeps s USING (sweep_id) LEFT JOIN runs r USING (run_id) "
            "WHERE s.name = ? ORDER BY t.trial_index, t.attempt", sweep)
        keys = ("trial", "attempt", "state", "reason", "task", "run_dir", "uuid")
        return [dict(zip(keys, r)) for r in rows]

    def final_states(self, sweep: str) -> dict[int, str]:
        last: dict[int, str] = {}
        for t in self.trials(sweep):
            last[t["trial"]] = t["state"]
        return last

    def points(self, sweep: str) -> dict[str, dict[str, list]]:
        r = self.orrery("runs", "export", "--format", "json", "--points", "--sweep", sweep)
        out: dict[str, dict[str, list]] = collections.defaultdict(dict)
        for series in json.loads(r.stdout):
            out[series["run_uuid"]][series["key"]] = [(p[0], p[2]) for p in series["points"]]
        return out


def file_points(run_dir: Path) -> dict[str, list]:
    """Every metric point a trial wrote, from its events.jsonl as it is on disk."""
    out: dict[str, list] = collections.defaultdict(list)
    f = run_dir / "events.jsonl"
    if not f.exists():
        return out
    for line in f.read_bytes().split(b"\n"):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        if isinstance(e, dict) and e.get("kind") == "metrics":
            for k, v in e.get("values", {}).items():
                out[k].append((e["step"], v if not isinstance(v, str) else float(v)))
    return out


def same(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))


# --- the campaign --------------------------------------------------------------------------------
class Campaign:
    def __init__(self, a, fixture: dict[str, str], state_file: Path, world: World, proxy: Proxy | None):
        self.a, self.fixture, self.state_file, self.world, self.proxy = a, fixture, state_file, world, proxy
        self.rng = random.Random(a.seed)
        self.faults: list[dict] = []
        self.timers: list[tuple[float, int, object]] = []
        self.seq = 0
        self.daemon_lock = threading.Lock()
        kinds = LOCAL_KINDS if world.local else KINDS
        self.kinds = [k for k in kinds if self.possible(k)]
        self.left_out = [k for k in kinds if k not in self.kinds]

    def possible(self, kind: str) -> bool:
        w = self.world
        if kind == "store-full":
            return bool(w.store_disk and w.store_disk.mounted)
        if kind == "cluster-full":
            return bool(w.remote_disk and w.remote_disk.mounted)
        return True

    def later(self, delay: float, fn) -> None:
        self.seq += 1
        heapq.heappush(self.timers, (time.monotonic() + delay, self.seq, fn))

    def restart(self, daemon: str, down_for: float, fault: dict) -> None:
        def go():
            with self.daemon_lock:
                r = subprocess.run(FIXTURE + ["restart", "--state", str(self.state_file), "--daemon", daemon,
                                              "--down-for", f"{down_for:.1f}"], capture_output=True, text=True)
            if r.returncode != 0:
                fault["error"] = r.stderr.strip()[-300:]
                log(f"restarting {daemon} failed: {fault['error']}")
            fault["ended"] = time.monotonic()
        threading.Thread(target=go, daemon=True).start()

    def inject(self, kind: str) -> None:
        w, rng = self.world, self.rng
        fault = {"kind": kind, "at": time.monotonic(), "ended": None, "truth": None, "recovered": None,
                 "what": ""}
        now = time.monotonic()
        live = [f for f in w.followers if f.alive() and not f.stopped]
        if kind.startswith("follower-") and not live:
            return
        if kind == "follower-kill":
            f = rng.choice(live)
            f.signal(signal.SIGKILL)
            fault["what"] = f.name
            delay = rng.uniform(0, 2)

            def again(f=f, fault=fault):
                f.reap()
                if not f.done and not self.over:
                    f.start()
                fault["ended"] = time.monotonic()
            self.later(delay, again)
        elif kind == "follower-stop":
            f = rng.choice(live)
            f.signal(signal.SIGSTOP)
            f.stopped = True
            hold = LEASE_S + rng.uniform(2, 10)
            fault["what"] = f"{f.name} for {hold:.0f} s"

            def cont(f=f, fault=fault):
                f.signal(signal.SIGCONT)
                f.stopped = False
                fault["ended"] = time.monotonic()
            self.later(hold, cont)
        elif kind == "conn-cut":
            fault["what"] = f"{self.proxy.cut()} connections"
            fault["ended"] = now
        elif kind == "conn-stall":
            secs = rng.uniform(3, 12)
            fault["what"] = f"{self.proxy.stall(secs)} connections for {secs:.0f} s"
            self.later(secs, lambda fault=fault: fault.update(ended=time.monotonic()))
        elif kind == "conn-halfclose":
            fault["what"] = f"{self.proxy.half_close()} connections"
            fault["ended"] = now
        elif kind in ("sshd-restart", "slurmctld-restart", "slurmd-restart"):
            if self.daemon_lock.locked():
                return  # one daemon at a time: the fixture's state file has one writer
            if kind == "sshd-restart":
                daemon, down = "sshd", rng.uniform(1, 4)
            elif kind == "slurmctld-restart":
                daemon, down = "slurmctld", rng.uniform(2, 10)
            else:
                daemon = "slurmd-" + rng.choice(self.fixture["ORRERY_TEST_SLURM_NODES"].split(","))
                down = rng.uniform(1, 3)
            fault["what"] = f"{daemon} down {down:.0f} s"
            self.restart(daemon, down, fault)
        elif kind in ("store-full", "cluster-full"):
            disk = w.store_disk if kind == "store-full" else w.remote_disk
            if any(f["kind"] == kind and f["ended"] is None for f in self.faults):
                return
            hold = rng.uniform(5, 15) if kind == "store-full" else rng.uniform(2, 6)
            disk.fill()
            fault["what"] = f"{hold:.0f} s"

            def free(disk=disk, fault=fault):
                disk.free()
                fault["ended"] = time.monotonic()
            self.later(hold, free)
        self.faults.append(fault)
        log(f"{kind}: {fault['what']}")

    def next_kind(self) -> str:
        # Every kind once in a shuffled first round, then by weight.
        done = {f["kind"] for f in self.faults}
        first = [k for k in self.kinds if k not in done]
        if first:
            return self.rng.choice(first)
        return self.rng.choices(self.kinds, weights=[WEIGHTS[k] for k in self.kinds])[0]

    def run(self) -> float:
        w = self.world
        self.over = False
        started = time.monotonic()
        next_fault = started + self.rng.expovariate(1 / self.a.every)
        deadline = started + self.a.timeout
        while True:
            now = time.monotonic()
            if now > deadline:
                raise RuntimeError(f"the campaign did not end in {self.a.timeout:.0f} s")
            while self.timers and self.timers[0][0] <= now:
                heapq.heappop(self.timers)[2]()
            for f in w.followers:
                if not f.alive() and f.proc is not None:
                    f.reap()
                    if not f.done and not f.signalled:
                        f.start()  # it crashed (noted): the user starts it again
            # Recovered: the store knows what the trials' files said when the fault ended (every
            # point written by then, every completion), so the time includes the follow's pace.
            waiting = [f for f in self.faults if f["ended"] is not None and f["recovered"] is None]
            if waiting:
                known = w.known()
                for f in waiting:
                    if f["truth"] is None:
                        f["truth"] = w.truth()
                    if known[0] >= f["truth"][0] and known[1] >= f["truth"][1]:
                        f["recovered"] = time.monotonic()
            injecting = len(self.faults) < self.a.faults
            if injecting and now >= next_fault:
                self.inject(self.next_kind())
                next_fault = now + self.rng.expovariate(1 / self.a.every)
            if w.active() == 0 and not self.timers and not self.daemon_lock.locked():
                break
            time.sleep(0.25)
        self.over = True
        return time.monotonic() - started


def stop_followers(w: World) -> None:
    for f in w.followers:
        if f.alive():
            f.signalled = True  # ours: not a crash
            f.signal(signal.SIGCONT)
            f.proc.terminate()
            try:
                f.proc.wait(20)
            except subprocess.TimeoutExpired:
                f.signal(signal.SIGKILL)
        f.reap()


def follow_to_end(w: World) -> None:
    """The last follow, fault-free: one `sweep watch` per sweep until it ends."""
    for sweep in w.sweeps:
        r = subprocess.run([w.cli, "sweep", "watch", sweep, "--pace", "0.5,2"], env=w.env(),
                           capture_output=True, text=True, timeout=w.a.timeout)
        if r.returncode != 0:
            log(f"{w.name}: final watch of {sweep} exited {r.returncode}: {r.stderr[-500:]}")


def slurm(fixture: dict[str, str], *argv: str) -> str:
    e = dict(os.environ, SLURM_CONF=fixture["SLURM_CONF"])
    return subprocess.run(list(argv), env=e, capture_output=True, text=True).stdout


def submissions(fixture: dict[str, str]) -> int:
    log_file = Path(fixture["ORRERY_TEST_CLUSTER_LOGS"]) / "slurmctld.log"
    return log_file.read_text(errors="replace").count("_slurm_rpc_submit_batch_job: JobId=")


def trial_processes(under: Path) -> list[str]:
    """Processes working in a directory under `under` (a trial runs in its run directory)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if cwd.startswith(str(under) + "/"):
            found.append(f"{entry.name} in {cwd}: {cmd[:120]}")
    return found


def judge(w: World, clean: World | None, submitted_before: int | None, fixture: dict[str, str]) -> dict:
    """The oracle. Returns counts and the problems found, each one line."""
    problems: list[str] = []
    res = {"trials": 0, "completed": 0, "lost": 0, "attempts": 0, "points": 0, "points_lost": 0,
           "points_duplicated": 0, "runs_twice": 0, "orphans": 0, "integrity": "?", "curves_differ": 0}
    arrays = set()
    for sweep in w.sweeps:
        final = w.final_states(sweep)
        trials = w.trials(sweep)
        res["trials"] += len(final)
        res["attempts"] += len(trials)
        res["completed"] += sum(1 for s in final.values() if s == "completed")
        want = None
        if clean is not None:
            csweep = sweep.replace(w.name, clean.name)
            want = {i for i, s in clean.final_states(csweep).items() if s == "completed"}
            lost = sorted(want - {i for i, s in final.items() if s == "completed"})
            res["lost"] += len(lost)
            for i in lost:
                mine = [f"{t['state']} ({t['reason']})" for t in trials if t["trial"] == i]
                problems.append(f"{sweep}: trial {i} completed in the clean run, here: {'; '.join(mine)}")
        for t in trials:
            if t["task"] and not w.local:
                arrays.add(t["task"].split("_")[0])
        # Each attempt once: every job id a trial's ledger saw is one the store recorded for it.
        tasks_of = collections.defaultdict(set)
        for t in trials:
            tasks_of[t["trial"]].add(t["task"])
        run_dirs = {t["trial"]: t["run_dir"] for t in trials if t["run_dir"]}
        uuid_of = {t["trial"]: t["uuid"] for t in trials if t["uuid"]}
        stored = w.points(sweep)
        clean_points = clean.points(sweep.replace(w.name, clean.name)) if clean else {}
        clean_uuid = {}
        if clean:
            clean_uuid = {t["trial"]: t["uuid"] for t in clean.trials(sweep.replace(w.name, clean.name))}
        for i, d in sorted(run_dirs.items()):
            ledger = Path(d) / "ledger.jsonl"
            if ledger.exists() and not w.local:
                for line in ledger.read_text().splitlines():
                    try:
                        e = json.loads(line)
                    except ValueError:
                        continue
                    task = f"{e['SLURM_ARRAY_JOB_ID']}_{e['SLURM_ARRAY_TASK_ID']}"
                    if task not in tasks_of[i]:
                        res["runs_twice"] += 1
                        problems.append(f"{sweep}: trial {i} ran as {task}, which the store never recorded "
                                        f"(it has {sorted(tasks_of[i])})")
            # Points: one per step of a series, the value the file wrote last for that step (a
            # resumed attempt logs the steps after its checkpoint again; the store keeps the
            # last, docs/store.md), nothing the file does not have.
            on_disk = file_points(Path(d))
            in_store = stored.get(uuid_of.get(i, ""), {})
            for key in set(on_disk) | set(in_store):
                want_of = {step: v for step, v in on_disk.get(key, [])}
                have = collections.Counter(step for step, _ in in_store.get(key, []))
                have_of = {step: v for step, v in in_store.get(key, [])}
                res["points"] += len(want_of)
                lost = [step for step, v in want_of.items() if step not in have_of or not same(have_of[step], v)]
                dup = [step for step, n in have.items() if n > 1 or step not in want_of]
                res["points_lost"] += len(lost)
                res["points_duplicated"] += len(dup)
                if lost or dup:
                    problems.append(f"{sweep}: trial {i} {key}: steps {sorted(lost)[:5]} of its file not stored "
                                    f"as written, steps {sorted(dup)[:5]} stored twice or not in the file")
            # The curve a fault-free run drew (command trials: the loss is a function of lr, step).
            if clean and "cmd" in sweep and final.get(i) == "completed":
                mine = {s: v for s, v in in_store.get("train/loss", [])}
                theirs = {s: v for s, v in clean_points.get(clean_uuid.get(i, ""), {}).get("train/loss", [])}
                if mine.keys() != theirs.keys() or any(not same(mine[s], theirs[s]) for s in mine):
                    res["curves_differ"] += 1
                    problems.append(f"{sweep}: trial {i}'s train/loss differs from the clean run's "
                                    f"({len(mine)} steps vs {len(theirs)})")
    if submitted_before is not None:
        made = submissions(fixture) - submitted_before
        if made != len(arrays):
            problems.append(f"the controller accepted {made} submissions; the store holds {len(arrays)} arrays")
            res["runs_twice"] += max(0, made - len(arrays))
        res["submissions"] = made
    # Orphans.
    if not w.local:
        queue = slurm(fixture, "squeue", "-h", "-o", "%i %j %T")
        left = [line for line in queue.splitlines() if any(s in line for s in w.sweeps)]
        res["orphans"] += len(left)
        problems += [f"left in Slurm's queue: {line}" for line in left]
    left = trial_processes(w.dir)
    res["orphans"] += len(left)
    problems += [f"trial process left running: {line}" for line in left]
    check = w.orrery("db", "check", "--json", check=False)
    res["integrity"] = "ok" if check.returncode == 0 else "FAILED"
    if check.returncode != 0:
        problems.append(f"db check: {check.stdout.strip()[:500]}")
    res["problems"] = problems
    return res


def table(c: Campaign, res: dict, wall: float, executor: str) -> str:
    lines = [f"### {executor}: {len(c.faults)} faults, seed {c.a.seed}, {res['trials']} trials, "
             f"{wall:.0f} s", ""]
    if c.left_out:
        lines += [f"Left out (this machine cannot): {', '.join(c.left_out)}", ""]
    lines += ["| fault | injected | recovered | recovery median s | max s |", "|---|---|---|---|---|"]
    by = collections.defaultdict(list)
    for f in c.faults:
        by[f["kind"]].append(f)
    for kind in c.kinds:
        fs = by.get(kind, [])
        rec = [f["recovered"] - f["ended"] for f in fs if f["recovered"] is not None and f["ended"] is not None]
        med = f"{statistics.median(rec):.1f}" if rec else "-"
        mx = f"{max(rec):.1f}" if rec else "-"
        lines.append(f"| {kind} | {len(fs)} | {len(rec)} | {med} | {mx} |")
    lines += ["", "| trials | completed | lost | attempts | ran unrecorded | points | lost | duplicated | "
              "curves unlike the clean run's | orphans | db check | follower crashes |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|",
              f"| {res['trials']} | {res['completed']} | {res['lost']} | {res['attempts']} | {res['runs_twice']} | "
              f"{res['points']} | {res['points_lost']} | {res['points_duplicated']} | {res['curves_differ']} | "
              f"{res['orphans']} | {res['integrity']} | {res['crashes']} |"]
    return "\n".join(lines)


def campaign(a, executor: str, fixture: dict[str, str], state_file: Path, work: Path) -> tuple[bool, str]:
    local = executor == "local"
    proxy = None if local else Proxy(int(fixture["ORRERY_TEST_SSH_PORT"]))
    clean = World(f"clean-{executor}", a, work, fixture, None, local, faults=False)
    chaos = World(f"chaos-{executor}", a, work, fixture, proxy.port if proxy else None, local, faults=True)
    try:
        log(f"{executor}: the fault-free run")
        clean.submit()
        follow_to_end(clean)
        before = None if local else submissions(fixture)
        log(f"{executor}: the campaign")
        chaos.submit()
        chaos.start_followers(a.gui, a.monitor)
        c = Campaign(a, fixture, state_file, chaos, proxy)
        if c.left_out:
            log(f"left out: {', '.join(c.left_out)} ({chaos.store_disk.why})")
        wall = 0.0
        try:
            wall = c.run()
        finally:
            stop_followers(chaos)
            for disk in (chaos.store_disk, chaos.remote_disk):
                if disk:
                    disk.free()
        follow_to_end(chaos)
        time.sleep(1)
        res = judge(chaos, clean, before, fixture)
        res["crashes"] = sum(len(f.crashes) for f in chaos.followers)
        for f in chaos.followers:
            res["problems"] += [f"follower crashed: {x}" for x in f.crashes]
        out = table(c, res, wall, executor)
        for p in res["problems"]:
            log(f"PROBLEM {p}")
        bad = res["problems"] or res["lost"] or res["points_lost"] or res["points_duplicated"]
        return not bad, out
    finally:
        if proxy:
            proxy.close()
        if not a.keep:
            for w in (clean, chaos):
                for disk in (w.store_disk, w.remote_disk):
                    if disk:
                        disk.unmount()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("build")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--faults", type=int, default=40, help="how many faults to inject (at most)")
    p.add_argument("--every", type=float, default=3.0, help="mean seconds between faults")
    p.add_argument("--trials", type=int, default=200, help="command trials")
    p.add_argument("--trainer-trials", type=int, default=8)
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--step-seconds", type=float, default=0.3)
    p.add_argument("--concurrent", type=int, default=12)
    p.add_argument("--followers", type=int, default=2, help="`sweep watch` per sweep")
    p.add_argument("--gui", action="store_true", help="the window follows too (offscreen)")
    p.add_argument("--monitor", action="store_true", help="the terminal monitor follows too (under script(1))")
    p.add_argument("--executor", choices=["slurm", "local", "both"], default="slurm")
    p.add_argument("--nodes", type=int, default=6)
    p.add_argument("--timeout", type=float, default=3600)
    p.add_argument("--keep", action="store_true")
    a = p.parse_args()

    work = Path(tempfile.mkdtemp(prefix="orrery-chaos-"))
    os.chmod(work, 0o755)
    state = work / "cluster.env"
    ok, tables = True, []
    executors = ["slurm", "local"] if a.executor == "both" else [a.executor]
    fixture: dict[str, str] = {}
    if "slurm" in executors:
        # Another fixture starting at the same moment (a parallel test run) can take a port this
        # one picked: that start fails at once, and a second picks others.
        for attempt in range(3):
            up = subprocess.run(FIXTURE + ["up", "--state", str(state), "--nodes", str(a.nodes),
                                           "--gpus-per-node", "1"])
            if up.returncode == 0:
                break
            if attempt == 2:
                raise RuntimeError("the fixture's cluster would not start")
            time.sleep(2)
        fixture = dict(line.split("=", 1) for line in state.read_text().splitlines() if "=" in line and line[0] != "#")
    try:
        for ex in executors:
            good, out = campaign(a, ex, fixture, state, work)
            ok = ok and good
            tables.append(out)
    finally:
        if fixture:
            subprocess.run(FIXTURE + ["down", "--state", str(state)], check=False)
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            log(f"kept {work}")
    print("\n\n".join(tables))
    print("\nverdict:", "every trial once, every point once, nothing orphaned" if ok else "FAILED (see PROBLEM lines)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
