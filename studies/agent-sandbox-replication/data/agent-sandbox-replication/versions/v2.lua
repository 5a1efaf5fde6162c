-- agent-sandbox-replication/v2.lua: the replication's third version: the
-- published design less Kata (v1.lua), with the inputs this host's image
-- can hold offline in place of the study's (the sixth amendment). The
-- sheet itself is protocols/agent-sandbox-replication.lua.
-- SPDX-License-Identifier: MIT

-- Every container gets the same limits, the same image and the run's
-- folder at /work (a fresh one per run, made by prereg).
local function docker(runtime)
  return "docker run --rm --runtime=" .. runtime
    .. " --cpus 2 --memory 2g --network none"
    .. " --cgroup-parent /prereg/{run_id} --name prereg-{run_id}"
    .. " -v \"$PWD\":/work -w /work {image} {cmd}"
end

-- The requires of an arm: Docker first, so that on a machine without it
-- the refusal names Docker; then the runtime's own binary, then a real
-- container of the image under that runtime.
local function needs(runtime, binary)
  return { "docker --version", "docker info", binary .. " --version",
           "docker image inspect {image}",
           "docker run --rm --runtime=" .. runtime .. " {image} true" }
end

protocol {
  id = "agent-sandbox-replication",
  title = "Isolating a coding agent with gVisor or Kata: what it costs "
    .. "compared with Docker, measured",
  question = "What do gVisor and Kata Containers cost in time and memory "
    .. "with agent work, compared with Docker's default runtime, on the "
    .. "same machine and with the same limits?",
  author = "the author of the published study",

  vars = {
    -- Debian 12 (bookworm) with git, gcc, make, python3 and the
    -- workloads' inputs (Lua 5.4.4's sources, Debian's Python wheels, the
    -- inner clock), built from Debian packages by
    -- scripts/docker/agent-image.sh (sixth amendment).
    image = "prereg/agent-sandbox:bookworm",
  },

  arms = {
    { name = "runc", reference = true, run = docker("runc"),
      requires = needs("runc", "runc"),
      versions = { "docker version", "containerd --version",
                   "runc --version", "uname -sr" } },
    { name = "gvisor", run = docker("runsc"),
      requires = needs("runsc", "runsc"),
      versions = { "runsc --version" } },
    -- Kata's two arms, kata-qemu and the first amendment's kata-clh, are
    -- dropped by the fifth amendment.
  },

  image = { digest = "docker image ls --no-trunc --quiet {image}" },

  workloads = {
    -- docker run --rm of the image running true, timed from the host.
    { name = "startup", runs = 30, warmup = 1, cmd = "true",
      metrics = { "wall_s" } },

    -- An idle container; after 10 s the PSS of its processes on the host:
    -- those in its cgroup, the descendants of the launching process, and
    -- the runtime helpers whose command line names the container (shims,
    -- the gVisor sandbox and gofer, QEMU or Cloud Hypervisor, virtiofsd).
    -- Fixed by the fourth amendment; rerun in full.
    { name = "idle-memory", runs = 10, cmd = "sleep 300",
      metrics = { "pss_mib" }, sample_after_s = 10, timeout_s = 120,
      processes = { descendants = true, cgroup = "/prereg/{run_id}",
                    cmdline = { "prereg-{run_id}" } } },

    -- An agent's commands, in order, each in a new container: the replay
    -- of protocols/sandbox-cost/replay.txt (sixth amendment), which makes
    -- the git repository and its first commit itself; five steps fail on
    -- purpose. stdin closed, each step capped at 120 s. A run counts only
    -- if every step returns the same exit code as in runc.
    { name = "replay", runs = 10,
      expect_exit = "reference", timeout_s = 120, metrics = { "wall_s" },
      steps = {
        -- replay.txt begins
        "git init -q .",
        "git config user.email agent@example.org",
        "git config user.name Agent",
        [[sh -c 'printf "# calc\n\nA tiny calculator library.\n" > README.md']],
        [[sh -c 'mkdir -p src tests && printf "int add(int a, int b) { return a + b; }\n" > src/calc.c']],
        "git add -A",
        "git commit -q -m 'First commit'",
        "git status",
        "ls -la",
        "ls src tests",
        "cat README.md",
        "cat src/calc.c",
        "cat CONTRIBUTING.md",
        "grep -rn add src",
        "grep -rn subtract src",
        "sed -n 1,5p src/calc.c",
        "find . -name '*.c' -not -path './.git/*'",
        "wc -l README.md src/calc.c",
        [[sh -c 'printf "int add(int a, int b);\nint sub(int a, int b);\n" > src/calc.h']],
        [[sh -c 'printf "int sub(int a, int b) { return a - b; }\n" >> src/calc.c']],
        "git diff --stat",
        "git diff",
        "gcc -fsyntax-only -Wall src/calc.c",
        [[sh -c 'printf "#include <assert.h>\n#include \"../src/calc.h\"\nint main(void) { assert(add(2, 2) == 4); assert(sub(5, 3) == 2); return 0; }\n" > tests/test_calc.c']],
        "gcc -Wall -o test_calc tests/test_calc.c src/calc.c",
        "./test_calc",
        "git status --short",
        "cat .gitignore",
        "sh -c 'echo test_calc > .gitignore'",
        "git add -A",
        "git commit -q -m 'Add sub and its test'",
        "git log --oneline",
        "git show --stat HEAD",
        "grep -c int src/calc.c",
        "head -n 3 src/calc.c",
        "tail -n 1 src/calc.c",
        "sed -i s/tiny/small/ README.md",
        "git diff --name-only",
        "grep -q small README.md",
        "git checkout -q -- README.md",
        "grep -q small README.md",
        "ls nonexistent-folder",
        "sh -c 'git log --format=%s | head -n 1'",
        "du -s src",
        "rm -f test_calc",
        "git status --porcelain",
        -- replay.txt ends
      } },

    -- The whole of Lua, make and clean: 5.4.4, Debian 12's (sixth
    -- amendment); inner_s from a clock inside the container (second
    -- amendment).
    { name = "compile", runs = 10, warmup = 1,
      cmd = "inner-time inner_s make -C /src/lua-5.4.4 all clean",
      metrics = { "wall_s", "inner_s" }, timeout_s = 600 },

    -- A Python virtual environment, the wheels Debian ships installed into
    -- it without network (sixth amendment), and a tree of 5,000 files
    -- made, packed and extracted, checked at each stage
    -- (protocols/agent-sandbox-replication/files-workload). Fixed by the
    -- fourth amendment (it could fail unnoticed).
    { name = "files", runs = 10, warmup = 1,
      cmd = "inner-time inner_s files-workload",
      metrics = { "wall_s", "inner_s" }, timeout_s = 600 },
  },

  rule = {
    estimator = "median", confidence = 0.95, resamples = 10000, seed = 17,
    verdicts = {
      { "slower", ci_excludes = 1, ratio_above = 1.10 },
      { "tie", ci_within = { 0.95, 1.05 } },
    },
  },

  hypotheses = {
    -- H1 was about Kata alone; it is withdrawn by the fifth amendment.
    { id = "H2", says = "gVisor takes less than 1.5 times runc on the "
        .. "agent command replay (the published H2, without its Kata half)",
      workload = "replay", metric = "wall_s",
      arms = { "gvisor" }, claim = below(1.5) },
    { id = "H3", says = "The many-small-files workload is the one gVisor "
        .. "makes most expensive",
      arms = { "gvisor" },
      -- Among the timed workloads (the inner clock where there is one),
      -- the one with gVisor's highest ratio to runc must be files.
      claim = function(results)
        local by = {}
        for _, r in ipairs(results) do
          if r.arm == "gvisor" and r.metric ~= "pss_mib" then
            local cur = by[r.workload]
            if cur == nil or r.metric == "inner_s" then by[r.workload] = r end
          end
        end
        local top
        for w, r in pairs(by) do
          if top == nil or r.ratio > top.ratio
              or (r.ratio == top.ratio and w < top.workload) then
            top = r
          end
        end
        if top == nil then return "inconclusive", "no gVisor results" end
        local why = string.format("highest ratio: %s %s (%.2fx)",
                                  top.workload, top.metric, top.ratio)
        return top.workload == "files" and "held" or "not held", why
      end },
  },

  threats = {
    "One machine, a laptop with a SATA SSD: the absolute numbers do not "
      .. "carry over to a server; the ratios between arms are what counts.",
    "Each technology in its default configuration; gVisor's other "
      .. "platforms were not tried.",
    "The same limits do not give the same resources: in the study nproc "
      .. "said 8 in runc and 2 in gVisor.",
    "The replay is not the study's six recorded sessions (not published) "
      .. "but sandbox-cost's 46 commands of one agent-like session on a small "
      .. "C project.",
    "Lua 5.4.4 is compiled, not 5.4.7; the files workload installs "
      .. "Debian's pip and setuptools wheels, not JupyterLab's dependencies.",
    "The image's ls is busybox's, in both arms: Debian 12's gVisor "
      .. "fails every GNU ls (statx with AT_NO_AUTOMOUNT gives EINVAL).",
    "Memory is the PSS of the selected processes, not the host's total.",
    "No security was measured and no escape attempted.",
  },

  amendments = {
    { date = "2026-10-21",
      why = "Kata with QEMU takes about 7 s to start; people who use Kata "
        .. "seriously switch hypervisors, so the same Kata with its official "
        .. "Cloud Hypervisor configuration is added as an arm. Its start-up "
        .. "and compile runs are done after those of the other three arms "
        .. "(blocked, not interleaved); the other workloads are "
        .. "interleaved." },
    { date = "2026-10-21",
      why = "Time from the host includes bringing the container up, 6 to 7 "
        .. "s in Kata; a clock inside the container (inner_s) is added to "
        .. "compile and files so that the work itself is timed too." },
    { date = "2026-10-22",
      why = "The no-container baseline on the host is dropped: on NixOS the "
        .. "host lacks the image's Debian tools, the replay failed on paths "
        .. "and the compile used another GCC, so it is not comparable. runc "
        .. "stays the reference." },
    { date = "2026-10-22",
      why = "An external audit rejected three workloads: the replay failed "
        .. "silently (the folder was not a git repository and some commands "
        .. "were re-escaped wrongly), the files workload could fail without "
        .. "the harness noticing, and the memory workload's process "
        .. "selection had errors. All three are fixed and rerun in full, "
        .. "interleaving the four arms; each step now runs with stdin "
        .. "closed and a 120 s cap.",
      supersedes = { "replay", "files", "idle-memory" } },
    { date = "2026-12-01",
      why = "Replication on a Debian 12 host. Kata Containers is not "
        .. "packaged for Debian 12 (neither kata-runtime nor its QEMU and "
        .. "Cloud Hypervisor configurations), so its two arms, kata-qemu "
        .. "and the first amendment's kata-clh, are dropped: runc and "
        .. "gVisor remain, interleaved in every workload (the first "
        .. "amendment's blocked Cloud Hypervisor runs fall with their arm). "
        .. "H1 was about Kata alone and cannot be tested here: it is "
        .. "withdrawn, not replaced. H2 keeps its gVisor half. The threats "
        .. "about Kata go with it." },
    { date = "2026-12-01",
      why = "The study's inputs the image cannot hold offline are replaced, "
        .. "each by the nearest thing Debian 12 packages: (1) the replay's "
        .. "six recorded agent sessions are not published, so the replay "
        .. "runs protocols/sandbox-cost/replay.txt, 46 commands of an "
        .. "agent-like session on a small C project that make the git "
        .. "repository and its first commit themselves (no prepare), five "
        .. "of which fail on purpose; (2) Lua 5.4.7 is not in Debian 12: "
        .. "the compile builds Lua 5.4.4 from Debian's lua5.4 source "
        .. "package; (3) no package index with JupyterLab is reachable "
        .. "offline: the files workload installs the Python wheels Debian "
        .. "ships (pip, setuptools, from /usr/share/python-wheels) into "
        .. "the venv with pip --no-index, then makes, packs and extracts "
        .. "the 5,000 files, counting at each stage; (4) the image is "
        .. "prereg/agent-sandbox:bookworm, built by "
        .. "scripts/docker/agent-image.sh (debootstrap of bookworm with "
        .. "git, gcc, libc6-dev, make, python3, python3-venv and "
        .. "busybox-static, the inner clock as inner-time NAME CMD), its ID "
        .. "on every row; (5) its ls is busybox's, first on PATH, in both "
        .. "arms: Debian 12's gVisor (runsc 20221219) rejects statx with "
        .. "AT_NO_AUTOMOUNT, which GNU ls 9.1 calls, so every GNU ls exits "
        .. "2 under it, and the replay's two ls steps would measure that "
        .. "old release's missing flag, not the runtime's cost." },
  },
}
