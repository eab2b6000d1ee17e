#include "agent/error_headline.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

TEST(ErrorHeadline, AJaxTracebackShowsItsExceptionNotItsFirstLine) {
  const std::string error =
      "Traceback (most recent call last):\n"
      "  File \"<candidate>\", line 12, in workload\n"
      "    return pl.pallas_call(kernel)(x)\n"
      "TypeError: kernel() missing 1 required positional argument: 'j'\n"
      "--------------------\n"
      "For simplicity, JAX has removed its internal frames from the traceback of the following "
      "exception. Set JAX_TRACEBACK_FILTERING=off to include these.\n";
  EXPECT_EQ(error_headline(error), "TypeError: kernel() missing 1 required positional argument: 'j'");
}

TEST(ErrorHeadline, ADottedExceptionNameCounts) {
  EXPECT_EQ(error_headline("Traceback (most recent call last):\n  File \"x\", line 1\n"
                           "jax._src.pallas.mosaic.lowering.LoweringException: bad block\n"),
            "jax._src.pallas.mosaic.lowering.LoweringException: bad block");
}

TEST(ErrorHeadline, AJudgeMessageWithoutATracebackIsItsLastLine) {
  EXPECT_EQ(error_headline("outputs differ from the reference\n  in 3% of the elements\n"),
            "in 3% of the elements");
  EXPECT_EQ(error_headline("no pallas_call in the program"), "no pallas_call in the program");
}

TEST(ErrorHeadline, NothingToShowIsEmpty) {
  EXPECT_EQ(error_headline(""), "");
  EXPECT_EQ(error_headline("\n  \n---\n"), "");
}

}  // namespace
}  // namespace palladium
