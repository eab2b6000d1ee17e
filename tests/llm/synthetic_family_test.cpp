#include "llm/synthetic_family.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>

namespace palladium {

// Readable gtest messages for Variant comparisons.
void PrintTo(const Variant& v, std::ostream* os) { *os << v.describe(); }

namespace {

namespace fs = std::filesystem;

const fs::path kSynthetic = fs::path(PALLADIUM_SOURCE_DIR) / "llm" / "synthetic";

std::vector<Variant> all_tilings(const KernelTemplate& t) {
  std::vector<Variant> out{Variant{t.name, {}, {}}};
  for (const auto& p : t.params) {
    std::vector<Variant> next;
    for (const auto& v : out) {
      for (int value : p.values) {
        Variant w = v;
        w.params[p.name] = value;
        next.push_back(std::move(w));
      }
    }
    out = std::move(next);
  }
  return out;
}

TEST(SyntheticFamilyTest, CoversTheQuickStartWorkloadsAndThreeMore) {
  auto ids = synthetic_workloads(kSynthetic);
  for (const char* w : {"8p", "12p", "9p", "41k", "1p"}) {
    EXPECT_NE(std::find(ids.begin(), ids.end(), w), ids.end()) << w;
  }
  EXPECT_GE(ids.size(), 8u);
  bool priority_with_reference = false;  // 2p, 3p, 4p, 6p or 11p
  for (const char* w : {"2p", "3p", "4p", "6p", "11p"}) {
    priority_with_reference |= std::find(ids.begin(), ids.end(), w) != ids.end();
  }
  EXPECT_TRUE(priority_with_reference);
}

// Every variant the model can write renders to a complete module and reads back as itself, so
// the model recognises its own answers in later prompts.
TEST(SyntheticFamilyTest, EveryVariantRoundTripsThroughIdentify) {
  for (const auto& w : synthetic_workloads(kSynthetic)) {
    KernelFamily fam = KernelFamily::load(kSynthetic, w);
    int pairs = 0;
    for (const auto& t : fam.templates()) {
      auto mistakes = fam.mistakes_for(t.name);
      // Every kind of slip a model makes shows up in every family.
      const auto tilings = all_tilings(t);
      for (const auto& v : tilings) {
        const std::string code = fam.render(v);
        ASSERT_EQ(code.find("{{"), std::string::npos) << w << " " << v.describe();
        ASSERT_NE(code.find("def workload("), std::string::npos);
        auto back = fam.identify(code);
        ASSERT_TRUE(back) << w << " " << v.describe();
        EXPECT_EQ(*back, v) << w << ": " << back->describe() << " vs " << v.describe();
        for (size_t i = 0; i < mistakes.size(); ++i) {
          Variant one = v;
          one.mistakes = {mistakes[i]->id};
          ASSERT_TRUE(fam.renders(one)) << w << " " << one.describe();
          auto b1 = fam.identify(fam.render(one));
          ASSERT_TRUE(b1);
          EXPECT_EQ(*b1, one) << w << ": " << b1->describe() << " vs " << one.describe();
          // Pairs at one tiling: the patches do not depend on the tile values.
          for (size_t j = i + 1; &v == &tilings.front() && j < mistakes.size(); ++j) {
            Variant two = v;
            two.mistakes = {mistakes[i]->id, mistakes[j]->id};
            if (!fam.renders(two)) continue;  // overlapping patches: the model skips the pair
            ++pairs;
            auto b2 = fam.identify(fam.render(two));
            ASSERT_TRUE(b2);
            EXPECT_EQ(*b2, two) << w << ": " << b2->describe() << " vs " << two.describe();
          }
        }
      }
    }
    EXPECT_GT(pairs, 0) << w;
  }
}

TEST(SyntheticFamilyTest, EachFamilyHasEveryKindOfSlipAndAQuestion) {
  for (const auto& w : synthetic_workloads(kSynthetic)) {
    KernelFamily fam = KernelFamily::load(kSynthetic, w);
    std::set<Slip> kinds;
    for (const auto& m : fam.mistakes()) kinds.insert(m.slip);
    EXPECT_EQ(kinds.size(), 4u) << w << " lacks a kind of slip";
    EXPECT_FALSE(fam.questions().empty()) << w;
    EXPECT_GE(fam.templates().size(), 2u) << w;
  }
}

TEST(SyntheticFamilyTest, ForeignCodeIsNotIdentified) {
  KernelFamily fam = KernelFamily::load(kSynthetic, "8p");
  EXPECT_FALSE(fam.identify("def workload(A, B):\n    return A @ B\n"));
  EXPECT_FALSE(fam.identify(""));
  // Another family's kernel is not this family's.
  KernelFamily rms = KernelFamily::load(kSynthetic, "12p");
  Variant v{rms.templates().front().name, {}, {}};
  for (const auto& p : rms.templates().front().params) v.params[p.name] = p.first.front();
  EXPECT_FALSE(fam.identify(rms.render(v)));
}

class TempSynthetic {
 public:
  TempSynthetic() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("palladium_syn_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "templates");
    fs::create_directories(dir_ / "families");
    write("templates/t.py.tmpl", "TILE = {{TILE}}\n\ndef k_kernel(x_ref):\n    {{BODY}}\n");
    write("templates/t.yaml",
          "signature: 'def k_kernel('\nparams:\n  TILE: {values: [1, 2], first: [1]}\n"
          "prose: ['tile {{TILE}}']\nmistakes:\n  - id: m\n    slip: logic\n    patch:\n"
          "      - {find: 'pass', replace: 'return'}\n");
    write("families/9z.yaml",
          "workload: 9z\nvars: {BODY: pass}\ntemplates:\n  - {name: t}\nquestions: [q]\n");
  }
  ~TempSynthetic() { fs::remove_all(dir_); }
  void write(const std::string& rel, const std::string& text) { std::ofstream(dir_ / rel) << text; }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
};

TEST(SyntheticFamilyTest, SmallFamilyRendersPatchesAndProse) {
  TempSynthetic t;
  KernelFamily fam = KernelFamily::load(t.dir(), "9z");
  Variant v{"t", {{"TILE", 2}}, {}};
  EXPECT_EQ(fam.render(v), "TILE = 2\n\ndef k_kernel(x_ref):\n    pass\n");
  v.mistakes = {"m"};
  EXPECT_EQ(fam.render(v), "TILE = 2\n\ndef k_kernel(x_ref):\n    return\n");
  EXPECT_EQ(fam.prose(v, 7), "tile 2");
  EXPECT_EQ(fam.identify(fam.render(v)), v);
  Variant missing{"t", {}, {}};
  EXPECT_THROW(fam.render(missing), FamilyError);
  Variant unknown{"t", {{"TILE", 1}}, {"nope"}};
  EXPECT_FALSE(fam.renders(unknown));
}

TEST(SyntheticFamilyTest, BrokenFilesNameTheProblem) {
  auto expect_error = [](TempSynthetic& t, const std::string& needle) {
    try {
      KernelFamily::load(t.dir(), "9z");
      ADD_FAILURE() << "no error for " << needle;
    } catch (const FamilyError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  {
    TempSynthetic t;
    t.write("families/9z.yaml", "workload: 9z\ntemplates:\n  - {name: missing}\nquestions: [q]\n");
    expect_error(t, "missing.yaml: cannot read the file");
  }
  {
    TempSynthetic t;
    t.write("templates/t.py.tmpl", "TILE={{TILE}}\ndef k_kernel(x_ref):\n    {{BODY}}\n");
    expect_error(t, "the template has no line 'TILE = {{TILE}}'");
  }
  {
    TempSynthetic t;
    t.write("templates/t.yaml",
            "signature: 'def k_kernel('\nparams:\n  TILE: {values: [1, 2], first: [1]}\n"
            "prose: [p]\nmistakes:\n  - {id: m, slip: typo, patch: [{find: a, replace: b}]}\n");
    expect_error(t, "slip must be api, tiling, logic or loop, not 'typo'");
  }
  {
    TempSynthetic t;
    t.write("templates/t.yaml",
            "signature: 'def other('\nparams:\n  TILE: {values: [1, 2], first: [3]}\nprose: [p]\n");
    expect_error(t, "first: 3 is not in values");
  }
  {
    TempSynthetic t;
    EXPECT_THROW(KernelFamily::load(t.dir(), "../etc"), FamilyError);
  }
}

}  // namespace
}  // namespace palladium
