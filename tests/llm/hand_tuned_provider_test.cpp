#include "llm/hand_tuned_provider.hpp"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "llm/code_extractor.hpp"

namespace palladium {
namespace {

const std::filesystem::path kHome = PALLADIUM_SOURCE_DIR;

TEST(HandTunedProvider, AnswersWithTheReferenceModuleAsExtractableCode) {
  auto p = make_hand_tuned_provider(kHome);
  ChatRequest req;
  req.workload_id = "8p";
  auto r = p->complete(req);
  std::ifstream in(kHome / "workloads/hand_tuned/ref_8p.py");
  std::ostringstream source;
  source << in.rdbuf();
  EXPECT_EQ(extract_code(r.text), source.str()) << "the code a run evaluates is the file, byte for byte";
  EXPECT_EQ(r.model, "hand_tuned");
  EXPECT_TRUE(r.tokens_estimated);
  EXPECT_EQ(p->name(), "hand_tuned");
}

TEST(HandTunedProvider, AWorkloadWithoutAReferenceIsAPermanentError) {
  auto p = make_hand_tuned_provider(kHome);
  ChatRequest req;
  req.workload_id = "12p";
  try {
    p->complete(req);
    FAIL();
  } catch (const ProviderError& e) {
    EXPECT_FALSE(e.retryable());
    EXPECT_NE(std::string(e.what()).find("'12p' no hand-tuned reference"), std::string::npos) << e.what();
  }
  req.workload_id = "../8p";
  EXPECT_THROW(p->complete(req), ProviderError);
}

}  // namespace
}  // namespace palladium
