// Key pairs and certificate files: the format pyzmq reads, modes, refusals, allowlists.
#include "protocol/curve_keys.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "protocol/endpoint.hpp"

namespace palladium::keys {
namespace {

namespace fs = std::filesystem;

class CurveKeysTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("curve-keys-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  mode_t mode(const fs::path& p) {
    struct stat st {};
    ::stat(p.c_str(), &st);
    return st.st_mode & 0777;
  }
  fs::path dir_;
};

TEST_F(CurveKeysTest, GeneratedPairsAreZ85AndConsistent) {
  KeyPair a = generate(), b = generate();
  EXPECT_TRUE(is_z85_key(a.public_key));
  EXPECT_TRUE(is_z85_key(a.secret_key));
  EXPECT_NE(a.public_key, b.public_key);
  EXPECT_EQ(public_of(a.secret_key), a.public_key);
  EXPECT_FALSE(is_z85_key("short"));
  EXPECT_FALSE(is_z85_key(std::string(40, '"')));
  EXPECT_THROW(public_of("not a key"), KeyError);
}

TEST_F(CurveKeysTest, WritePairMakesASecretOnlyTheOwnerCanRead) {
  KeyPair pair = generate();
  std::string secret = write_pair(dir_.string(), "agent-1", pair);
  EXPECT_EQ(secret, (dir_ / "agent-1.key_secret").string());
  EXPECT_EQ(mode(dir_), 0700u);
  EXPECT_EQ(mode(dir_ / "agent-1.key_secret"), 0600u);
  EXPECT_EQ(mode(dir_ / "agent-1.key"), 0644u);
  KeyPair back = read_certificate(secret, true);
  EXPECT_EQ(back.public_key, pair.public_key);
  EXPECT_EQ(back.secret_key, pair.secret_key);
  KeyPair pub = read_certificate((dir_ / "agent-1.key").string(), false);
  EXPECT_EQ(pub.public_key, pair.public_key);
  EXPECT_TRUE(pub.secret_key.empty()) << "the public file holds no secret";
  EXPECT_THROW(read_certificate((dir_ / "agent-1.key").string(), true), KeyError);
  EXPECT_THROW(write_pair(dir_.string(), "agent-1", generate()), KeyError) << "no overwrite";
  EXPECT_THROW(write_pair(dir_.string(), "../evil", generate()), KeyError);
}

TEST_F(CurveKeysTest, ASecretReadableByOthersIsRefused) {
  std::string secret = write_pair(dir_.string(), "a", generate());
  fs::permissions(secret, fs::perms::others_read, fs::perm_options::add);
  try {
    read_certificate(secret, true);
    FAIL() << "a world-readable secret was accepted";
  } catch (const KeyError& e) {
    EXPECT_NE(std::string(e.what()).find("chmod 600"), std::string::npos) << e.what();
  }
}

TEST_F(CurveKeysTest, AMismatchedPairIsRefused) {
  fs::create_directories(dir_);
  KeyPair a = generate(), b = generate();
  fs::path p = dir_ / "mixed.key_secret";
  std::ofstream(p) << "curve\n    public-key = \"" << a.public_key << "\"\n    secret-key = \""
                   << b.secret_key << "\"\n";
  fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write);
  EXPECT_THROW(read_certificate(p.string(), true), KeyError);
}

TEST_F(CurveKeysTest, AllowlistsAreADirectoryOfKeysOrAFileOfLines) {
  KeyPair a = generate(), b = generate(), c = generate();
  write_pair((dir_ / "allow").string(), "a", a);
  write_pair((dir_ / "allow").string(), "b", b);
  // The secret files beside them are not part of the allowlist.
  auto from_dir = read_allowlist((dir_ / "allow").string());
  EXPECT_EQ(from_dir, (std::set<std::string>{a.public_key, b.public_key}));
  fs::path file = dir_ / "allow.txt";
  std::ofstream(file) << "# fleet keys\n" << c.public_key << "\n\npublic-key = \"" << a.public_key
                      << "\"\n";
  EXPECT_EQ(read_allowlist(file.string()), (std::set<std::string>{a.public_key, c.public_key}));
  std::ofstream(file, std::ios::app) << "garbage\n";
  try {
    read_allowlist(file.string());
    FAIL() << "a malformed line was accepted";
  } catch (const KeyError& e) {
    EXPECT_NE(std::string(e.what()).find("allow.txt:5"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_allowlist((dir_ / "nope").string()), KeyError);
}

TEST_F(CurveKeysTest, PublicKeyFromTextOrFile) {
  KeyPair a = generate();
  write_pair(dir_.string(), "x", a);
  EXPECT_EQ(public_key_from(a.public_key), a.public_key);
  EXPECT_EQ(public_key_from((dir_ / "x.key").string()), a.public_key);
  EXPECT_THROW(public_key_from((dir_ / "missing.key").string()), KeyError);
}

TEST(EndpointTest, LoopbackIsRecognisedAndNothingElse) {
  EXPECT_TRUE(is_loopback_endpoint("tcp://127.0.0.1:5555"));
  EXPECT_TRUE(is_loopback_endpoint("tcp://127.3.2.1:1"));
  EXPECT_TRUE(is_loopback_endpoint("tcp://localhost:80"));
  EXPECT_TRUE(is_loopback_endpoint("tcp://[::1]:80"));
  EXPECT_FALSE(is_loopback_endpoint("tcp://0.0.0.0:5555"));
  EXPECT_FALSE(is_loopback_endpoint("tcp://*:5555"));
  EXPECT_FALSE(is_loopback_endpoint("tcp://10.0.0.1:5555"));
  EXPECT_FALSE(is_loopback_endpoint("tcp://127.0.0.1.evil.com:5555"));
  EXPECT_FALSE(is_loopback_endpoint("ipc:///tmp/x"));
}

}  // namespace
}  // namespace palladium::keys
