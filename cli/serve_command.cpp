// `palladium serve DB [--port P] [--host 127.0.0.1]`: the live web dashboard.
//
// The dashboard is Python (dashboard/, the standard library's HTTP server) run
// by the project venv, the way the agent runs its judge: this command only
// finds that Python and replaces itself with `python -m dashboard`, passing
// its own path so the dashboard can ask `palladium status` and `report` for
// the numbers the terminal shows. Keeping the server out of the binary keeps
// the C++ build free of an HTTP stack; the page's script and style are files
// under dashboard/static/, served by it.
#include "cli/commands.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;

namespace palladium {

int serve_command(const std::vector<std::string>& args) {
  const fs::path home = palladium_home();
  const char* env_python = std::getenv("PALLADIUM_PYTHON");
  const std::string python =
      env_python && *env_python ? env_python : (home / ".venv" / "bin" / "python").string();
  if (::access(python.c_str(), X_OK) != 0) {
    std::cerr << "palladium serve: " << python
              << " is not an executable Python: run scripts/setup.sh (or set PALLADIUM_PYTHON)\n";
    return 2;
  }
  if (!fs::is_directory(home / "dashboard")) {
    std::cerr << "palladium serve: " << (home / "dashboard").string()
              << " is missing: PALLADIUM_HOME must be a Palladium source tree\n";
    return 2;
  }
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) {
    std::cerr << "palladium serve: cannot find this binary's path: " << ec.message() << "\n";
    return 1;
  }
  // The dashboard package is imported from PALLADIUM_HOME, whatever the working directory.
  std::string pythonpath = home.string();
  if (const char* old = std::getenv("PYTHONPATH"); old && *old) pythonpath += ":" + std::string(old);
  ::setenv("PYTHONPATH", pythonpath.c_str(), 1);

  std::vector<std::string> argv_s{python, "-m", "dashboard", "--palladium", self.string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(python.c_str(), argv.data());
  std::cerr << "palladium serve: cannot run " << python << ": " << std::strerror(errno) << "\n";
  return 1;
}

}  // namespace palladium
