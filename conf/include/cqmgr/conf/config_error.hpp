// A configuration problem that makes a Postfix daemon stop (msg_fatal).
// `postfix_text()` is the text stock Postfix logs after "fatal: ", so callers
// can log exactly what qmgr(8) would; `where()` names the file and line (or
// "command line") of the parameter involved, and `detail()` gives the reason
// when Postfix's own fatal text is generic (macro expansion errors).
// `warning()` is the complaint Postfix logs as a warning just before the
// fatal error (the macro or host name problem), or empty.
#pragma once

#include <stdexcept>
#include <string>

namespace cqmgr::conf {

class ConfigError : public std::runtime_error {
  public:
    // `where`, `detail` and `warning` may be empty.
    ConfigError(std::string where, std::string postfix_text, std::string detail = {},
                std::string warning = {});

    const std::string& where() const { return where_; }
    const std::string& postfix_text() const { return postfix_text_; }
    const std::string& detail() const { return detail_; }
    const std::string& warning() const { return warning_; }

  private:
    std::string where_;
    std::string postfix_text_;
    std::string detail_;
    std::string warning_;
};

} // namespace cqmgr::conf
