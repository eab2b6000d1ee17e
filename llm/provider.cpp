#include "llm/provider.hpp"

namespace palladium {

// Out of line so the vtable has one home.
Provider::~Provider() = default;

}  // namespace palladium
