// The candidate sandbox from the outside: palladium-sandbox runs a probe (Debian's python3,
// under the base seccomp stage) that reports what it can see and do.

#include "sandbox/candidate_sandbox.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>

#include "tests/agent/test_support.hpp"

namespace palladium::agent {
namespace {

TEST(CandidateSandboxArgsTest, ParsesAndNamesWhatIsWrong) {
  SandboxSpec spec;
  EXPECT_EQ(parse_sandbox_args({"--ro", "/opt/x", "--ro-at", "/a", "/b", "--env", "A=1",
                                "--as-mb", "4096", "--keep-fd", "5", "--", "prog", "arg"},
                               &spec),
            "");
  EXPECT_EQ(spec.read_only.size(), 2u);
  EXPECT_EQ(spec.read_only[1], (std::pair<std::string, std::string>{"/a", "/b"}));
  EXPECT_EQ(spec.limits.address_space_mb, 4096);
  EXPECT_EQ(spec.command, (std::vector<std::string>{"prog", "arg"}));
  SandboxSpec bad;
  EXPECT_EQ(parse_sandbox_args({"--as-mb", "lots", "--", "p"}, &bad),
            "--as-mb: \"lots\" is not an integer");
  EXPECT_EQ(parse_sandbox_args({"--ro", "relative", "--", "p"}, &bad).rfind("read-only", 0), 0u);
  EXPECT_EQ(parse_sandbox_args({"--bogus"}, &bad), "unknown argument \"--bogus\"");
  EXPECT_EQ(parse_sandbox_args({"--keep-fd", "1", "--", "p"}, &bad),
            "--keep-fd 1 is not in 3..1023");
  SandboxSpec none;
  EXPECT_EQ(parse_sandbox_args({"--ro", "/x"}, &none), "no command after --");
}

TEST(CandidateSandboxArgsTest, BwrapArgumentsHoldEveryNamespaceAndTheEnvironmentAllowlist) {
  SandboxSpec spec;
  ASSERT_EQ(parse_sandbox_args({"--ro", "/opt/py", "--env", "A=1", "--", "prog"}, &spec), "");
  std::vector<std::string> a = bwrap_arguments(spec, 7, 8, 9);
  auto has = [&](std::initializer_list<const char*> seq) {
    std::vector<std::string> want(seq.begin(), seq.end());
    return std::search(a.begin(), a.end(), want.begin(), want.end()) != a.end();
  };
  EXPECT_TRUE(has({"--unshare-all", "--unshare-user", "--disable-userns"}));
  EXPECT_TRUE(has({"--uid", "65534", "--gid", "65534"}));
  EXPECT_TRUE(has({"--cap-drop", "ALL"}));
  EXPECT_TRUE(has({"--die-with-parent", "--new-session"}));
  EXPECT_TRUE(has({"--ro-bind", "/opt/py", "/opt/py"}));
  EXPECT_TRUE(has({"--seccomp", "7", "--clearenv"}));
  EXPECT_TRUE(has({"--ro-bind-data", "8", "/palladium/seccomp/zygote.bpf"}));
  EXPECT_TRUE(has({"--setenv", "A", "1"}));
  EXPECT_EQ(a.back(), "prog");
  EXPECT_EQ(std::count(a.begin(), a.end(), "--bind"), 0) << "nothing is writable but /tmp";
  EXPECT_EQ(std::count(a.begin(), a.end(), "--cap-add"), 0) << a.size();
  // The mount point's parent is made 0755 before bwrap would make it 0700; /usr is a mount.
  EXPECT_TRUE(has({"--dir", "/opt"}));
  EXPECT_TRUE(has({"--dir", "/etc"}));
  EXPECT_FALSE(has({"--dir", "/usr"}));
}

TEST(CandidateSandboxArgsTest, TheTwoUidNamespaceGivesTheParentOnlyWhatItsSparesNeed) {
  SandboxSpec spec;
  ASSERT_EQ(parse_sandbox_args({"--", "prog"}, &spec), "");
  std::vector<std::string> a = bwrap_arguments(spec, 7, 8, 9, 5);
  auto has = [&](std::initializer_list<const char*> seq) {
    std::vector<std::string> want(seq.begin(), seq.end());
    return std::search(a.begin(), a.end(), want.begin(), want.end()) != a.end();
  };
  EXPECT_TRUE(has({"--userns", "5"}));
  for (const char* gone : {"--unshare-all", "--unshare-user", "--disable-userns"}) {
    EXPECT_EQ(std::count(a.begin(), a.end(), gone), 0) << gone << " does not go with --userns";
  }
  for (const char* ns : {"--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                         "--unshare-cgroup-try"}) {
    EXPECT_EQ(std::count(a.begin(), a.end(), ns), 1) << ns;
  }
  EXPECT_TRUE(has({"--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"}));
  EXPECT_EQ(std::count(a.begin(), a.end(), "--cap-add"), 2);
  EXPECT_TRUE(has({"--perms", "1777", "--size"}));
  EXPECT_TRUE(has({"--perms", "0444", "--ro-bind-data", "9", "/palladium/seccomp/candidate.bpf"}));
}

TEST(CandidateSandboxArgsTest, FindsTheDirectoryAnUnprivilegedUidCannotSearch) {
  std::string dir = testing::make_temp_dir("search");
  std::filesystem::create_directories(dir + "/closed/inner");
  ::chmod((dir + "/closed").c_str(), 0700);
  ::chmod(dir.c_str(), 0755);
  EXPECT_EQ(first_unsearchable_ancestor(dir + "/closed/inner"), dir + "/closed");
  ::chmod((dir + "/closed").c_str(), 0755);
  EXPECT_EQ(first_unsearchable_ancestor(dir + "/closed/inner"), "");
  std::filesystem::remove_all(dir);
}

// Runs the probe in the sandbox and returns its stdout (the launcher's status in *status).
std::string run_probe(const std::string& script, int* status,
                      const std::vector<std::string>& extra = {}) {
  std::string dir = testing::make_temp_dir("probe");
  std::string path = dir + "/probe.py";
  std::ofstream(path) << script;
  ::chmod(dir.c_str(), 0755);
  ::chmod(path.c_str(), 0644);
  std::string cmd = std::string(PALLADIUM_SANDBOX_BIN) + " --ro " + dir + " --env HOME=/tmp";
  for (const std::string& e : extra) cmd += " " + e;
  cmd += " -- /usr/bin/python3 " + path + " 2>&1";
  std::string out;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  std::array<char, 4096> buf{};
  while (pipe && std::fgets(buf.data(), buf.size(), pipe)) out += buf.data();
  *status = pipe ? ::pclose(pipe) : -1;
  std::filesystem::remove_all(dir);
  return out;
}

const char* kProbe = R"PY(
import os, socket
print("uid", os.getuid(), os.geteuid(), os.getgid())
status = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
print("capeff", status["CapEff"].strip())
print("ids", os.environ["PALLADIUM_SANDBOX_IDS"])
print("uid_map", open("/proc/self/uid_map").read().split())
print("gid_map", open("/proc/self/gid_map").read().split())
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
print("nested userns", libc.unshare(0x10000000), ctypes.get_errno())
print("max_user_namespaces", open("/proc/sys/user/max_user_namespaces").read().strip())
print("nnp", status["NoNewPrivs"].strip(), "seccomp", status["Seccomp"].strip())
print("pids", sorted(p for p in os.listdir("/proc") if p.isdigit()))
print("net", sorted(l.split(":")[0].strip() for l in open("/proc/self/net/dev").readlines()[2:]))
print("root", sorted(os.listdir("/")))
print("env", sorted(os.environ))
for path in ("/work", "/root", "/home", "/var", "/etc/passwd"):
    print("sees", path, os.path.exists(path))
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    print("inet ok")
except OSError as e:
    print("inet refused", e.errno)
try:
    open("/usr/palladium-escape", "w")
    print("usr writable")
except OSError as e:
    print("usr read-only", e.errno)
open("/tmp/scratch", "w").write("fine")
print("tmp writable")
for path in ("/dev/shm/stash", "/dev/stash"):
    try:
        open(path, "w").write("x" * 4096)
        print("writable", path)
    except OSError as e:
        print("read-only", path, e.errno)
open("/dev/null", "w").write("devices still work")
print("dev null writable")
)PY";

TEST(CandidateSandboxTest, TheProbeSeesOnlyItsOwnNamespace) {
  if (::access("/usr/bin/bwrap", X_OK) != 0) GTEST_SKIP() << "bubblewrap is not installed";
  ::setenv("PALLADIUM_TEST_SECRET_KEY", "sk-sandbox-test-secret", 1);
  int status = 0;
  std::string out = run_probe(kProbe, &status, {"--env", "VISIBLE=1"});
  ::unsetenv("PALLADIUM_TEST_SECRET_KEY");
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("uid 65534 65534 65534"), std::string::npos) << out;
  bool split = out.find("ids split: ") != std::string::npos;
  if (::geteuid() == 0) {
    // Root maps a second uid for the spares; the parent may take it, and nothing else.
    ASSERT_TRUE(split) << out;
    EXPECT_NE(out.find("capeff 00000000000000c0"), std::string::npos) << out;
    EXPECT_NE(out.find("uid_map ['65534', '65534', '1', '65533', '65533', '1']"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("gid_map ['65534', '65534', '1', '65533', '65533', '1']"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("max_user_namespaces 0"), std::string::npos) << out;
  } else {
    EXPECT_NE(out.find("ids one uid 65534: the launcher is not root"), std::string::npos) << out;
    EXPECT_NE(out.find("capeff 0000000000000000"), std::string::npos) << out;
  }
  EXPECT_NE(out.find("nested userns -1 1"), std::string::npos) << out;  // the base stage's EPERM
  EXPECT_NE(out.find("nnp 1 seccomp 2"), std::string::npos) << out;
  // Its own pid namespace: bwrap's init (1) and the probe (2), nothing of the host.
  EXPECT_NE(out.find("pids ['1', '2']"), std::string::npos) << out;
  EXPECT_NE(out.find("net ['lo']"), std::string::npos) << out;
  EXPECT_NE(out.find("sees /work False"), std::string::npos) << out;
  EXPECT_NE(out.find("sees /home False"), std::string::npos) << out;
  EXPECT_NE(out.find("sees /etc/passwd False"), std::string::npos) << out;
  // Exactly the --env list, plus what bwrap (PWD) and Python's locale coercion (LC_CTYPE) set.
  // (and the launcher's account of the sandbox's cgroup and uids, and the spares' uid).
  EXPECT_NE(out.find(std::string("env ['HOME', 'LC_CTYPE', 'PALLADIUM_SANDBOX_CGROUP_STATE', "
                                 "'PALLADIUM_SANDBOX_IDS', ") +
                     (split ? "'PALLADIUM_SPARE_ID', " : "") + "'PWD', 'VISIBLE']"),
            std::string::npos)
      << out;
  EXPECT_EQ(out.find("sk-sandbox-test-secret"), std::string::npos);
  EXPECT_NE(out.find("inet refused 1"), std::string::npos) << out;
  EXPECT_NE(out.find("usr read-only 30"), std::string::npos) << out;
  EXPECT_NE(out.find("tmp writable"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists("/usr/palladium-escape"));
  // /dev is host memory outside /tmp's size: read-only, but its device nodes work.
  EXPECT_NE(out.find("read-only /dev/shm/stash 30"), std::string::npos) << out;
  EXPECT_NE(out.find("read-only /dev/stash 30"), std::string::npos) << out;
  EXPECT_NE(out.find("dev null writable"), std::string::npos) << out;
}

// The threads of one sandbox are bounded by its own pids cgroup, not by a count shared with
// every sandbox of the host uid. Where the host offers no memory/pids cgroup the launcher says
// so on stderr (and the probe's environment says "none: ..."); the test then checks that.
TEST(CandidateSandboxTest, EachSandboxHasItsOwnPidsAndMemoryCgroup) {
  if (::access("/usr/bin/bwrap", X_OK) != 0) GTEST_SKIP() << "bubblewrap is not installed";
  const char* threads = R"PY(
import os, threading
print("cgroup", os.environ["PALLADIUM_SANDBOX_CGROUP_STATE"])
stop = threading.Event()
started = 0
try:
    for _ in range(200):
        threading.Thread(target=stop.wait, daemon=True).start()
        started += 1
except RuntimeError as e:
    print("refused:", e)
print("threads", started)
stop.set()
)PY";
  int status = 0;
  std::string out = run_probe(threads, &status, {"--pids", "40", "--memory-mb", "512"});
  ASSERT_EQ(status, 0) << out;
  if (out.find("cgroup none: ") != std::string::npos) {
    EXPECT_NE(out.find("WARNING: no memory/pids cgroup for this sandbox"), std::string::npos)
        << out;
    GTEST_SKIP() << "this host offers no memory/pids cgroup: " << out;
  }
  EXPECT_NE(out.find("memory=512MiB pids=40"), std::string::npos) << out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex("threads (\\d+)"))) << out;
  // bwrap's init, the probe's main thread, and at most 38 more.
  EXPECT_LT(std::stoi(m[1]), 40) << out;
  EXPECT_GT(std::stoi(m[1]), 10) << out;
  EXPECT_NE(out.find("can't start new thread"), std::string::npos) << out;
  // Without --pids the default (1024) holds: the 200 threads start.
  out = run_probe(threads, &status);
  EXPECT_NE(out.find("threads 200"), std::string::npos) << out;
  // A delegated v2 cgroup that is not there: no fallback, a warning naming why, and the runner
  // is told "none: ..." (the judge logs both).
  out = run_probe(threads, &status, {"--cgroup-parent", "/nonexistent/palladium"});
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("WARNING: no memory/pids cgroup for this sandbox (cgroup v2: "),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("cgroup none: cgroup v2: "), std::string::npos) << out;
  EXPECT_NE(out.find("/nonexistent/palladium"), std::string::npos) << out;
  std::string err = run_probe("", &status, {"--pids", "3"});
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_NE(err.find("--pids must be >= 16"), std::string::npos) << err;
}

TEST(CandidateSandboxTest, LimitsReachTheCommandAndBadArgumentsAreNamed) {
  if (::access("/usr/bin/bwrap", X_OK) != 0) GTEST_SKIP() << "bubblewrap is not installed";
  int status = 0;
  std::string out = run_probe(
      "import resource\n"
      "for n in ('AS', 'NOFILE', 'CORE', 'FSIZE'):\n"
      "    print(n, resource.getrlimit(getattr(resource, 'RLIMIT_' + n)))\n",
      &status, {"--as-mb", "3000", "--nofile", "64", "--fsize-mb", "8"});
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("AS (" + std::to_string(3000LL << 20)), std::string::npos) << out;
  EXPECT_NE(out.find("NOFILE (64, 64)"), std::string::npos) << out;
  EXPECT_NE(out.find("CORE (0, 0)"), std::string::npos) << out;
  std::string err = run_probe("", &status, {"--nproc", "x"});
  EXPECT_EQ(WEXITSTATUS(status), 2);
  EXPECT_NE(err.find("--nproc: \"x\" is not an integer"), std::string::npos) << err;
}

}  // namespace
}  // namespace palladium::agent
