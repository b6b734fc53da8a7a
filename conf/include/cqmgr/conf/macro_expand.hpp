// $name expansion in parameter values, with the syntax and limits of
// Postfix 3.7 (mac_parse/mac_expand with recursion, as daemons and
// `postconf -x` use it):
//   $name ${name} $(name)          value of name, expanded again; "" if unset
//   $$                             a literal $
//   ${name?text} ${name?{text}}    text when name is non-empty
//   ${name:text} ${name:{text}}    text when name is unset or empty
//   ${name?{text1}:{text2}}        if-then-else (the else part may be bare text)
//   ${{text1} op {text2} ? {a} : {b}}  relational: op is == != < <= >= >;
//                                  numeric when both sides are all digits,
//                                  else byte-wise; the `level` suffix
//                                  (<level, ==level, ...) compares
//                                  compatibility levels.  ${{..} op {..}}
//                                  alone gives "true" or "".
// Braced text keeps its inner white space; white space around braces is
// ignored; bare text after ? or : runs to the end and keeps its leading
// white space.  Any syntax error, or nesting deeper than 100 calls, is fatal
// in Postfix ("macro processing error"), so it throws ConfigError here.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace cqmgr::conf {

// Returns the raw (unexpanded) value of a parameter, or nullopt if unset.
using MacroLookup = std::function<std::optional<std::string>(const std::string& name)>;

// Expands `text`; throws ConfigError (postfix_text "macro processing error",
// detail saying what is wrong) on bad syntax or runaway recursion.
std::string expand_macros(std::string_view text, const MacroLookup& lookup);

} // namespace cqmgr::conf
