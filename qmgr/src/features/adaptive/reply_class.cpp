#include "reply_class.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace cqmgr::qmgr {

// Receivers' words for their limits, as Postfix, Gmail, Microsoft and
// Yahoo write them.  Order matters: the first match wins, so the narrow
// rules come before the broad ones.
const char* const default_reply_rules = R"(
# A per-message recipient limit (Postfix smtpd_recipient_limit) is no
# destination limit: the SMTP client sends the rest in another session.
/\b4\.5\.3\b.*too many recipients\b/                other
# Connection limits (Postfix anvil smtpd_client_connection_count_limit,
# Microsoft 4.3.2 and 4.7.500 "Too many connections", Exim, Sendmail).
/too many (concurrent |simultaneous |smtp |open )?(connections|sessions)/ connection_limit
/maximum number of (concurrent |simultaneous )?(server )?connections/     connection_limit
/connection (count )?limit (exceeded|reached)/      connection_limit
/too many hosts? connected/                         connection_limit
# Rate limits (Postfix anvil smtpd_client_message_rate_limit and
# smtpd_client_recipient_rate_limit, Gmail 4.7.28 and "rate limited",
# Microsoft 4.7.500 "Server busy", Yahoo [TSS04], generic throttling).
/too much mail from/                                rate_limit
/too many (messages|recipients|mails?) from/        rate_limit
/\b4\.7\.28\b/                                      rate_limit
/rate[- ]limit(ed|ing)?\b/                          rate_limit
/unusual rate of/                                   rate_limit
/receiving mail (at|too) (a )?(rate|fast)/          rate_limit
/\b4\.7\.500\b.*server busy/                        rate_limit
/\[TS[S]?0[0-9]\]/                                  rate_limit
/temporarily deferred due to (unexpected )?volume/  rate_limit
/throttl(ed|ing)\b/                                 rate_limit
# Greylisting (postgrey, milter-greylist, and the usual 4.7.1/4.2.0 words).
/gr[ae]y-?list/                                     greylist
/\b4\.[27]\.[01]\b.*(try|come back|please retry).* later/ greylist
# A receiver that does not answer in time or drops the session (a tarpit, a
# host that is down): the Postfix SMTP and LMTP clients' own words.
/conversation with .* timed out/                    timeout
/lost connection with /                             timeout
/connect to .*: (connection|operation) timed out/   timeout
)";

namespace {

constexpr std::array<std::pair<ReplyClass, const char*>, 6> names{{
    {ReplyClass::connection_limit, "connection_limit"},
    {ReplyClass::rate_limit, "rate_limit"},
    {ReplyClass::greylist, "greylist"},
    {ReplyClass::timeout, "timeout"},
    {ReplyClass::hard, "hard"},
    {ReplyClass::other, "other"},
}};

} // namespace

const char* reply_class_name(ReplyClass c) {
    for (const auto& [cls, name] : names)
        if (cls == c) return name;
    return "other";
}

std::optional<ReplyClass> reply_class_from_name(std::string_view name) {
    std::string n(name);
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char ch) {
        return ch == '-' ? '_' : static_cast<char>(std::tolower(ch));
    });
    for (const auto& [cls, word] : names)
        if (n == word) return cls;
    return std::nullopt;
}

ReplyClassifier::ReplyClassifier(std::optional<RegexTable> admin_rules,
                                 const RegexTable::Warn& warn)
    : admin_(std::move(admin_rules)),
      defaults_(RegexTable::parse("pcre", "default reply rules", default_reply_rules,
                                  [](const std::string&) {})),
      warn_(warn) {
    if (warn_) {
        if (admin_)
            admin_->warn_on_limit(
                [warn = warn_](const std::string& w) { warn("cqmgr_adaptive_reply_rules: " + w); });
        defaults_.warn_on_limit(warn_);
    }
}

ReplyClass ReplyClassifier::classify(std::string_view status, std::string_view text,
                                     MatchBudget& budget) const {
    // The rules see only the first max_subject bytes: no more is copied.
    std::string key(status.substr(0, max_subject));
    key += ' ';
    key += text.substr(0, max_subject - std::min(max_subject, key.size()));
    if (auto it = recent_.find(key); it != recent_.end()) return it->second;
    ReplyClass unnamed = !status.empty() && status[0] == '5' ? ReplyClass::hard : ReplyClass::other;
    if (budget.spent()) return unnamed;
    // What a full budget decides is the text's own class, to keep.
    bool full = budget.hits_left >= MatchBudget::default_hits;
    ++matched_;
    std::optional<ReplyClass> cls;
    if (admin_)
        if (auto result = admin_->find(key, budget)) {
            cls = reply_class_from_name(*result);
            if (!cls && warn_)
                warn_("cqmgr_adaptive_reply_rules: unknown class \"" + *result + "\"");
        }
    if (!cls)
        if (auto result = defaults_.find(key, budget)) cls = reply_class_from_name(*result);
    if (!cls) cls = unnamed;
    if (full || !budget.spent()) {
        if (recent_.size() >= recent_limit) recent_.clear();
        recent_.emplace(std::move(key), *cls);
    }
    return *cls;
}

ReplyClass ReplyClassifier::classify(std::string_view status, std::string_view text) const {
    MatchBudget budget;
    return classify(status, text, budget);
}

uint64_t ReplyClassifier::limit_hits() const {
    return defaults_.limit_hits() + (admin_ ? admin_->limit_hits() : 0);
}

} // namespace cqmgr::qmgr
