#include "llm/http_failure.hpp"

#include <gtest/gtest.h>

namespace palladium {
namespace {

HttpResponse with_header(const std::string& name, const std::string& value) {
  HttpResponse r;
  r.status = 429;
  r.headers[name] = value;
  return r;
}

TEST(HttpFailureTest, StatusCodesMapToRetrySemantics) {
  EXPECT_EQ(errc_for_http_status(400), Errc::invalid_argument);
  EXPECT_EQ(errc_for_http_status(401), Errc::unauthenticated);
  EXPECT_EQ(errc_for_http_status(403), Errc::permission_denied);
  EXPECT_EQ(errc_for_http_status(404), Errc::not_found);
  EXPECT_EQ(errc_for_http_status(429), Errc::resource_exhausted);
  EXPECT_EQ(errc_for_http_status(500), Errc::unavailable);
  EXPECT_EQ(errc_for_http_status(503), Errc::unavailable);
  EXPECT_EQ(errc_for_http_status(504), Errc::deadline_exceeded);
  for (int s : {400, 401, 403, 404}) EXPECT_FALSE(retryable(errc_for_http_status(s))) << s;
  for (int s : {408, 409, 429, 500, 502, 503, 504}) EXPECT_TRUE(retryable(errc_for_http_status(s))) << s;
}

TEST(HttpFailureTest, RetryAfterSecondsFractionsAndMilliseconds) {
  EXPECT_EQ(retry_after_of(with_header("retry-after", "30"))->count(), 30000);
  EXPECT_EQ(retry_after_of(with_header("retry-after", "1.5"))->count(), 1500);
  EXPECT_EQ(retry_after_of(with_header("retry-after-ms", "250"))->count(), 250);
  EXPECT_FALSE(retry_after_of(with_header("retry-after", "soon")));
  EXPECT_FALSE(retry_after_of(with_header("retry-after", "-3")));
  EXPECT_FALSE(retry_after_of(HttpResponse{}));
}

TEST(HttpFailureTest, RetryAfterHttpDate) {
  // Wed, 21 Oct 2015 07:28:00 GMT is 1445412480 in Unix time.
  const auto now = std::chrono::system_clock::from_time_t(1445412480 - 12);
  auto d = retry_after_of(with_header("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"), now);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->count(), 12000);
  const auto later = std::chrono::system_clock::from_time_t(1445412480 + 100);
  EXPECT_EQ(retry_after_of(with_header("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT"), later)
                ->count(),
            0);
}

TEST(HttpFailureTest, RedactsTheKeyAndKeyShapedTokens) {
  EXPECT_EQ(redact("bad key my-own-secret here", "my-own-secret"), "bad key [redacted] here");
  EXPECT_EQ(redact("Incorrect API key provided: sk-ab***yz.", ""),
            "Incorrect API key provided: [redacted].");
  EXPECT_EQ(redact("key AIzaSyA0123456789abcdef invalid", ""), "key [redacted] invalid");
  EXPECT_EQ(redact("nothing secret", "k"), "nothing secret");  // a 1-char key still scrubs
}

TEST(HttpFailureTest, TransportFailuresAreRetryableExceptCancel) {
  HttpResponse r;
  r.failure = TransportFailure::timeout;
  EXPECT_EQ(http_failure("openai", r, "", std::nullopt, "").code(), Errc::deadline_exceeded);
  r.failure = TransportFailure::dropped;
  EXPECT_EQ(http_failure("openai", r, "", std::nullopt, "").code(), Errc::unavailable);
  r.failure = TransportFailure::connect;
  EXPECT_EQ(http_failure("openai", r, "", std::nullopt, "").code(), Errc::unavailable);
  r.failure = TransportFailure::cancelled;
  EXPECT_EQ(http_failure("openai", r, "", std::nullopt, "").code(), Errc::cancelled);
}

TEST(HttpFailureTest, HeaderRetryAfterWinsOverTheBodys) {
  HttpResponse r = with_header("retry-after", "2");
  auto e = http_failure("gemini", r, "slow down", std::chrono::milliseconds(9000), "");
  EXPECT_EQ(e.retry_after()->count(), 2000);
  r.headers.clear();
  e = http_failure("gemini", r, "slow down", std::chrono::milliseconds(9000), "");
  EXPECT_EQ(e.retry_after()->count(), 9000);
  EXPECT_NE(std::string(e.what()).find("gemini: HTTP 429 (resource_exhausted): slow down"),
            std::string::npos)
      << e.what();
}

}  // namespace
}  // namespace palladium
