#include "llm/code_extractor.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

// Odd LLM responses seen (or expected) in the wild, one named case each.

TEST(CodeExtractorTest, PlainPythonBlock) {
  EXPECT_EQ(extract_code("Here:\n```python\nx = 1\n```\nDone."), "x = 1\n");
}

TEST(CodeExtractorTest, PyInfoStringAndUppercase) {
  EXPECT_EQ(extract_code("```py\na = 2\n```"), "a = 2\n");
  EXPECT_EQ(extract_code("```Python\nb = 3\n```"), "b = 3\n");
  EXPECT_EQ(extract_code("```python3\nc = 4\n```"), "c = 4\n");
}

TEST(CodeExtractorTest, PythonBlockPreferredOverEarlierOtherBlock) {
  const char* r =
      "Run it with:\n```bash\npython run.py\n```\nThe kernel:\n"
      "```python\ndef workload(x):\n    return x\n```\n";
  EXPECT_EQ(extract_code(r), "def workload(x):\n    return x\n");
}

TEST(CodeExtractorTest, FirstOfSeveralPythonBlocks) {
  EXPECT_EQ(extract_code("```python\nfirst = 1\n```\n```python\nsecond = 2\n```"),
            "first = 1\n");
}

TEST(CodeExtractorTest, UnlabelledFenceIsTheFallback) {
  EXPECT_EQ(extract_code("Code:\n```\nimport jax\n```\n"), "import jax\n");
}

TEST(CodeExtractorTest, NoFenceMeansNoCode) {
  EXPECT_EQ(extract_code("I cannot write this kernel, sorry."), "");
  EXPECT_EQ(extract_code(""), "");
  EXPECT_EQ(extract_code("def workload(x): return x"), "");
}

TEST(CodeExtractorTest, CrlfLineEndings) {
  EXPECT_EQ(extract_code("Sure.\r\n```python\r\nx = 1\r\ny = 2\r\n```\r\n"),
            "x = 1\ny = 2\n");
}

TEST(CodeExtractorTest, UnterminatedFenceTakesTheRest) {
  // A response cut off by max_tokens.
  EXPECT_EQ(extract_code("```python\ndef workload(x):\n    return x"),
            "def workload(x):\n    return x\n");
}

TEST(CodeExtractorTest, IndentedFenceIsDedentedByItsIndent) {
  const char* r =
      "1. Write the kernel:\n"
      "   ```python\n"
      "   def workload(x):\n"
      "       return x\n"
      "   ```\n";
  EXPECT_EQ(extract_code(r), "def workload(x):\n    return x\n");
}

TEST(CodeExtractorTest, InlineTripleBackticksDoNotOpenABlock) {
  EXPECT_EQ(extract_code("Use ```pl.pallas_call``` here.\n```python\nz = 0\n```"),
            "z = 0\n");
  // At the start of a line too: an info string cannot contain backticks.
  EXPECT_EQ(extract_code("```pl.pallas_call``` is the entry point.\n"), "");
}

TEST(CodeExtractorTest, FenceTextOnTheSameLineIsNotAnOpener) {
  // "Here: ```python" in mid-line is prose, not a fence.
  EXPECT_EQ(extract_code("Here: ```python\nx = 1\n```"), "");
}

TEST(CodeExtractorTest, LongerClosingFenceAndTrailingSpaces) {
  EXPECT_EQ(extract_code("````python\nx = '```'\n````  \ntail"), "x = '```'\n");
}

TEST(CodeExtractorTest, EmptyPythonBlockIsSkipped) {
  EXPECT_EQ(extract_code("```python\n\n```\n```python\nreal = 1\n```"),
            "real = 1\n");
  EXPECT_EQ(extract_code("```python\n   \n```"), "");
}

TEST(CodeExtractorTest, InfoStringWithAttributes) {
  EXPECT_EQ(extract_code("```python title=\"kernel.py\"\nk = 1\n```"), "k = 1\n");
  EXPECT_EQ(extract_code("```python{.numberLines}\nk = 2\n```"), "k = 2\n");
}

TEST(CodeExtractorTest, BlankLinesInsideTheBlockAreKept) {
  EXPECT_EQ(extract_code("```python\na = 1\n\n\nb = 2\n```"), "a = 1\n\n\nb = 2\n");
}

// -- Shapes of real model answers (issue 7 item 6) -------------------------------------------

TEST(CodeExtractorTest, TheBlockThatDefinesWorkloadBeatsAHelperSnippet) {
  const char* r =
      "First a helper:\n```python\ndef _tile(n):\n    return 128\n```\n"
      "The full module:\n```python\nimport jax\n\ndef workload(x):\n    return x\n```\n";
  EXPECT_EQ(extract_code(r), "import jax\n\ndef workload(x):\n    return x\n");
}

TEST(CodeExtractorTest, TheFinalAnswerAfterADraftIsChosen) {
  const char* r =
      "Draft:\n```python\ndef workload(x):\n    return x + 0\n```\nOn second thought, fuse it:\n"
      "```python\ndef workload(x):\n    return x\n```\n";
  EXPECT_EQ(extract_code(r), "def workload(x):\n    return x\n");
}

TEST(CodeExtractorTest, ANestedWorkloadDoesNotCount) {
  const char* r =
      "```python\nclass K:\n    def workload(self):\n        pass\n```\n"
      "```python\nworkload = jax.jit(_impl)\n```\n";
  EXPECT_EQ(extract_code(r), "workload = jax.jit(_impl)\n");
}

TEST(CodeExtractorTest, NoLanguageTagStillFindsTheWorkload) {
  const char* r = "```json\n{\"a\": 1}\n```\n```\ndef workload(x):\n    return x\n```\n";
  EXPECT_EQ(extract_code(r), "def workload(x):\n    return x\n");
}

// 22 of 50 answers of one real model never closed their fence.
TEST(CodeExtractorTest, AnUnclosedFinalFenceIsTakenToTheEnd) {
  const char* r = "Here is the kernel:\n\n```python\nimport jax\n\ndef workload(x):\n    return x\n";
  EXPECT_EQ(extract_code(r), "import jax\n\ndef workload(x):\n    return x\n");
}

TEST(CodeExtractorTest, AClosedBlockBeatsALaterOneCutOffByTheTokenLimit) {
  const char* r =
      "```python\ndef workload(x):\n    return x\n```\nA faster variant:\n"
      "```python\ndef workload(x):\n    y = pl.pallas_call(";
  EXPECT_EQ(extract_code(r), "def workload(x):\n    return x\n");
}

TEST(CodeExtractorTest, ProseAroundTheCodeIsDropped) {
  const char* r =
      "Sure! I analysed the roofline first.\n\n```python\ndef workload(x):\n    return x\n```\n\n"
      "This should be about 2x faster because it avoids a round trip to HBM.";
  EXPECT_EQ(extract_code(r), "def workload(x):\n    return x\n");
}

TEST(CodeExtractorTest, CodeInsideThinkingIsIgnoredWhenTheAnswerHasCode) {
  const char* r =
      "<think>Maybe:\n```python\ndef workload(x):\n    return x * 1\n```\nno, simpler.</think>\n"
      "```python\ndef workload(x):\n    return x\n```\n";
  EXPECT_EQ(extract_code(r), "def workload(x):\n    return x\n");
}

TEST(CodeExtractorTest, AnswerCutOffWhileThinkingFallsBackToTheThoughtCode) {
  const char* r = "<THINKING>Try:\n```python\ndef workload(x):\n    return x\n```\nthen bench";
  EXPECT_EQ(extract_code(r), "def workload(x):\n    return x\n");
}

TEST(CodeExtractorTest, ATruncatedResponseWithNoCodeYetIsNoCode) {
  EXPECT_EQ(extract_code("Let me think about the tiling. The matrix is 4096 x 40"), "");
  EXPECT_EQ(extract_code("<think>The matrix is 4096 x 4096, so"), "");
}

}  // namespace
}  // namespace palladium
