#include "cqmgr/queuefile/attribute.hpp"

#include "cqmgr/queuefile/c_parse.hpp"

namespace cqmgr::queuefile {

const char* split_attribute(std::string_view text, std::string_view& name, std::string_view& value) {
    size_t np = 0;
    while (np < text.size() && c_isspace(text[np])) ++np;
    if (np == text.size() || text[np] == '=') return "missing attribute name";
    size_t ep = np;
    while (ep < text.size() && !c_isspace(text[ep]) && text[ep] != '=') ++ep;
    size_t cp = ep;
    while (cp < text.size() && c_isspace(text[cp])) ++cp;
    if (cp == text.size() || text[cp] != '=') return "missing '=' after attribute name";
    size_t vp = cp + 1;
    while (vp < text.size() && c_isspace(text[vp])) ++vp;
    size_t ve = text.size();
    while (ve > vp && c_isspace(text[ve - 1])) --ve;
    name = text.substr(np, ep - np);
    value = text.substr(vp, ve - vp);
    return nullptr;
}

int attribute_record_type(std::string_view name) {
    if (name == "dsn_orig_rcpt") return 'o';
    if (name == "notify_flags") return 'n';
    if (name == "envelope_id") return 'i';
    if (name == "ret_flags") return '<';
    if (name == "create_time") return 'c';
    return 0;
}

} // namespace cqmgr::queuefile
