// What both HTTP providers' tests feed them: one kernel request and a 200 answer.
#pragma once

#include <nlohmann/json.hpp>

#include "llm/http_transport.hpp"
#include "llm/provider.hpp"

namespace palladium::testing {

inline ChatRequest kernel_request() {
  ChatRequest r;
  r.workload_id = "8p";
  r.system_prompt = "You write kernels.";
  r.user_prompt = "## Workload 8p (GEMM)\nmake it fast";
  return r;
}

inline HttpResponse http_ok(const nlohmann::json& body) {
  HttpResponse r;
  r.status = 200;
  r.body = body.dump();
  return r;
}

}  // namespace palladium::testing
