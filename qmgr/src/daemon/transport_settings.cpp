#include "transport_settings.hpp"

#include "feedback_debug.hpp"
#include "log.hpp"
#include "scheduler_config.hpp"

namespace cqmgr::qmgr {

TransportSettings::TransportSettings(const conf::MainCf& cf, const conf::QmgrParams& params)
    : params_(params),
      table_(cf, params, [this](const std::string& w) { warnings_.push_back(w); }) {}

core::TransportConfig TransportSettings::operator()(const std::string& transport) {
    try {
        warnings_.clear();
        const conf::TransportParams& t = table_.get(transport);
        // Stock reads each feedback value, warns about it, then shows it
        // in a debug line, before the next one: the same order here.
        auto show = [&](const std::string& param, const conf::Feedback& fb) {
            std::string prefix = param + ": ";
            std::erase_if(warnings_, [&](const std::string& w) {
                if (!w.starts_with(prefix)) return false;
                log::warn(w);
                return true;
            });
            if (params_.destination_concurrency_feedback_debug)
                log_feedback_setting(transport, param, core_feedback(fb),
                                     static_cast<int>(params_.initial_destination_concurrency));
        };
        show(t.positive_feedback_param, t.positive_feedback);
        show(t.negative_feedback_param, t.negative_feedback);
        for (const auto& w : warnings_)
            log::warn(w);
        core::TransportConfig c = transport_config(t);
        share_config(c, t, params_);
        policy_config(c, t, params_);
        return c;
    } catch (const conf::ConfigError& e) {
        log::fatal(e.postfix_text());
    }
}

} // namespace cqmgr::qmgr
