// A small blocking SMTP client over loopback, for injecting messages with an
// explicit recipient list (smtp-source cannot do several domains).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace compat {

struct SmtpReply {
    int code = 0;
    std::string text; // all lines, joined with '\n'
};

class SmtpClient {
  public:
    // Connects to 127.0.0.1:port and reads the greeting (must be 220).
    SmtpClient(std::uint16_t port, std::chrono::seconds io_timeout);
    SmtpClient(const SmtpClient&) = delete;
    SmtpClient& operator=(const SmtpClient&) = delete;
    ~SmtpClient();

    // EHLO; must be 250.
    void ehlo(const std::string& name);
    // One mail transaction: MAIL FROM, RCPT TO for each recipient, DATA, the
    // message (dot-stuffed, CRLF line ends), ".". Every reply must be 2xx/3xx.
    // Non-empty params are appended to MAIL FROM / each RCPT TO (ESMTP parameters).
    void send_mail(const std::string& from, const std::vector<std::string>& to,
                   const std::string& message, const std::string& mail_params = "",
                   const std::string& rcpt_params = "");
    // QUIT (a missing 221 is not an error).
    void quit();
    // Sends up to `window` RCPT TO commands before reading their replies
    // (ESMTP PIPELINING, which Postfix's smtpd offers); 1, the default, waits
    // for each reply in turn.
    void pipeline_recipients(std::size_t window) { rcpt_window_ = window < 1 ? 1 : window; }

  private:
    SmtpReply command(const std::string& line, int expect_class, const std::string& what);
    SmtpReply expect_reply(int expect_class, const std::string& what);
    SmtpReply read_reply();
    void write_all(const std::string& data);
    std::string read_line();

    int fd_ = -1;
    std::uint16_t port_;
    std::chrono::seconds timeout_;
    std::string buf_;
    std::size_t rcpt_window_ = 1;
};

} // namespace compat
