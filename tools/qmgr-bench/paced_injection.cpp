#include "paced_injection.hpp"

#include "clock.hpp"
#include "mail_setup.hpp"

namespace bench {

bool PacedInjection::step() {
    double now = boot_seconds();
    if (!client_) {
        started = now;
        client_.emplace(port_, std::chrono::seconds(300));
        client_->ehlo("bench.example");
        client_->pipeline_recipients(500);
        first_(*client_);
        due_ = boot_seconds();
        return false;
    }
    if (sent_ < paced_ && now >= due_) {
        next_(*client_, sent_);
        ++sent_;
        due_ += interval_;
    }
    if (sent_ < paced_) return false;
    client_->quit();
    finished = boot_seconds();
    return true;
}

PacedInjection::SendNext one_recipient(std::string sender, std::string prefix, std::string domain) {
    return [sender, prefix, domain](compat::SmtpClient& c, std::uint64_t i) {
        c.send_mail(sender, {prefix + std::to_string(i) + "@" + domain},
                    short_message(sender, prefix));
    };
}

} // namespace bench
