// The one line of a judge's error text that a log line should show. A Python failure's first
// line is "Traceback (most recent call last):", which says nothing; the exception and its
// message come last, and JAX may append a trailer after them ("----", "For simplicity, JAX
// has removed its internal frames..."). Pure; safe from any thread.
#ifndef PALLADIUM_AGENT_ERROR_HEADLINE_HPP_
#define PALLADIUM_AGENT_ERROR_HEADLINE_HPP_

#include <string>
#include <string_view>

namespace palladium {

// The last line that names an exception ("ValueError: ...", "jax.errors.Foo: ..."), else the
// last non-blank line that is not a traceback frame or trailer, else "". Trimmed of
// surrounding blanks.
std::string error_headline(std::string_view error);

}  // namespace palladium

#endif  // PALLADIUM_AGENT_ERROR_HEADLINE_HPP_
