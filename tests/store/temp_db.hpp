// A per-test temporary database path, removed (with its WAL files) on exit.

#ifndef PALLADIUM_TESTS_STORE_TEMP_DB_HPP_
#define PALLADIUM_TESTS_STORE_TEMP_DB_HPP_

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace palladium {

class TempDb {
 public:
  TempDb() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = (std::filesystem::temp_directory_path() /
             ("palladium_" + std::string(info->test_suite_name()) + "_" +
              info->name() + "_" + std::to_string(::getpid()) + ".db"))
                .string();
    remove_all();
  }
  ~TempDb() { remove_all(); }
  const std::string& path() const { return path_; }

 private:
  void remove_all() {
    for (const char* suffix : {"", "-wal", "-shm", ".lock"}) {
      std::filesystem::remove(path_ + suffix);
    }
  }
  std::string path_;
};

}  // namespace palladium

#endif  // PALLADIUM_TESTS_STORE_TEMP_DB_HPP_
