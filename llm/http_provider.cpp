#include "llm/http_provider.hpp"

namespace palladium {

// Out of line so the vtable has one home.
HttpProvider::~HttpProvider() = default;

}  // namespace palladium
