// What a chrooted Postfix daemon needs inside the queue directory, copied as
// Debian's postfix package does before it starts chrooted services.
#pragma once

#include <string>

namespace compat {

// Copies etc/localtime, services, resolv.conf, hosts, host.conf and
// nsswitch.conf, the gcc_s/nss/resolv libraries, and makes dev/random and
// dev/urandom below `queue_dir`. No etc/passwd: Debian copies it only for
// local_recipient_maps = unix:passwd.byname, so a daemon must look up its
// users before it chroots.
void populate_chroot(const std::string& queue_dir);

} // namespace compat
