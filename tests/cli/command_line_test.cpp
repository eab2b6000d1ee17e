#include "cli/command_line.hpp"

#include <iostream>
#include <sstream>

#include <gtest/gtest.h>

namespace po = boost::program_options;

namespace palladium {
namespace {

// Runs parse_command_line with stdout and stderr captured.
struct Captured {
  std::optional<int> stop;
  std::string out, err;
  po::variables_map vm;
};

Captured parse(const std::vector<std::string>& args) {
  po::options_description opts("palladium eval --workload ID FILE [options]");
  opts.add_options()("help,h", "show this help")("workload", po::value<std::string>(), "id");
  Captured c;
  std::ostringstream out, err;
  struct Redirect {  // restored even when parsing throws
    std::ostream& s;
    std::streambuf* old;
    ~Redirect() { s.rdbuf(old); }
  } r1{std::cout, std::cout.rdbuf(out.rdbuf())}, r2{std::cerr, std::cerr.rdbuf(err.rdbuf())};
  c.stop = parse_command_line("eval", args, opts, {{"file", "FILE"}}, c.vm, {"workload"});
  c.out = out.str();
  c.err = err.str();
  return c;
}

TEST(CommandLine, AMissingArgumentIsNamedOnStderr) {
  auto c = parse({"--workload", "8p"});
  ASSERT_EQ(c.stop, 2);
  EXPECT_NE(c.err.find("palladium eval: missing FILE"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("--workload ID FILE"), std::string::npos) << "usage follows on stderr";
  EXPECT_EQ(c.out, "") << "nothing on stdout, which carries only results";
}

TEST(CommandLine, EveryMissingPieceIsNamed) {
  auto c = parse({});
  ASSERT_EQ(c.stop, 2);
  EXPECT_NE(c.err.find("missing FILE, --workload"), std::string::npos) << c.err;
}

TEST(CommandLine, HelpGoesToStdoutAndSucceeds) {
  auto c = parse({"--help"});
  ASSERT_EQ(c.stop, 0);
  EXPECT_NE(c.out.find("show this help"), std::string::npos);
  EXPECT_EQ(c.err, "");
}

TEST(CommandLine, CompleteArgumentsGoOn) {
  auto c = parse({"--workload", "8p", "k.py"});
  EXPECT_FALSE(c.stop);
  EXPECT_EQ(c.vm["file"].as<std::string>(), "k.py");
  EXPECT_EQ(c.vm["workload"].as<std::string>(), "8p");
}

TEST(CommandLine, AnUnknownOptionThrowsForMainToReport) {
  EXPECT_THROW(parse({"--workload", "8p", "k.py", "--nope"}), po::error);
}

}  // namespace
}  // namespace palladium
