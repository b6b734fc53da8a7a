# Sourced by the enable/disable test and tools/package-test: a private
# Postfix instance in a temporary directory, run by the system's own Postfix
# (postfix -c DIR start), with no network listener and its own log file.
# The system's /etc/postfix is only read (its master.cf is the template).
#
#   pi_create WORK DAEMON_DIR   config in WORK/conf, queue in WORK/queue
#   pi_start / pi_stop
#   pi_deliver TAG              one message to nobody, waits for status=sent
#   pi_qmgr_command             the command (qmgr or cqmgr) of the running
#                               queue manager process
#   pi_wait_qmgr COMMAND        waits up to 10 s for it to be COMMAND
#
# Functions print "FAIL: ..." and return 1 on failure.

pi_work=
pi_conf=

pi_create() {
    pi_work=$1
    pi_conf=$1/conf
    mkdir -p "$pi_conf" "$pi_work/queue" "$pi_work/data" "$pi_work/mail"
    # mktemp -d makes it 0700: the postfix account must reach the queue.
    chmod 755 "$pi_work"
    chmod 1777 "$pi_work/mail"
    chown postfix "$pi_work/data"
    cat >"$pi_conf/main.cf" <<EOF
compatibility_level = 3.6
queue_directory = $pi_work/queue
data_directory = $pi_work/data
daemon_directory = $2
maillog_file = $pi_work/maillog
maillog_file_prefixes = $pi_work
myhostname = test.example
mydomain = test.example
myorigin = test.example
mydestination = test.example, localhost
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
alias_maps =
alias_database =
mail_spool_directory = $pi_work/mail
biff = no
smtp_dns_support_level = disabled
EOF
    # The distribution's master.cf, unchrooted (the jail would need copies
    # of /etc files), without the SMTP listener on port 25.
    cp /etc/postfix/master.cf "$pi_conf/master.cf"
    postconf -c "$pi_conf" -F '*/*/chroot = n' &&
        postconf -c "$pi_conf" -MX smtp/inet || { echo "FAIL: postconf on $pi_conf"; return 1; }
    # Postfix re-reads a file changed within the last second, after a pause.
    touch -d '1 minute ago' "$pi_conf/main.cf" "$pi_conf/master.cf"
}

pi_start() {
    postfix -c "$pi_conf" start || { echo "FAIL: postfix -c $pi_conf start"; return 1; }
}

pi_stop() {
    [ -n "$pi_conf" ] && postfix -c "$pi_conf" status >/dev/null 2>&1 &&
        postfix -c "$pi_conf" stop
    return 0
}

# Sends one message with sendmail and waits up to 60 s for its delivery.
pi_deliver() {
    printf 'Subject: %s\n\n%s\n' "$1" "$1" |
        sendmail -C "$pi_conf" -f root nobody@test.example ||
        { echo "FAIL: sendmail"; return 1; }
    i=0
    # local(8) delivers it to nobody's mailbox.
    until grep -q "^Subject: $1\$" "$pi_work/mail/nobody" 2>/dev/null; do
        i=$((i + 1))
        if [ $i -gt 600 ]; then
            echo "FAIL: message $1 not delivered within 60 s; maillog:"
            tail -n 30 "$pi_work/maillog"
            return 1
        fi
        sleep 0.1
    done
}

# The first word of the command line of this instance's queue manager
# (a process whose environment names our MAIL_CONFIG).
pi_qmgr_command() {
    for env in /proc/[0-9]*/environ; do
        { tr '\0' '\n' <"$env"; } 2>/dev/null | grep -qx "MAIL_CONFIG=$pi_conf" || continue
        cmd=$({ tr '\0' ' ' <"${env%/environ}/cmdline"; } 2>/dev/null | cut -d' ' -f1)
        case $cmd in qmgr | cqmgr) echo "$cmd"; return 0 ;; esac
    done
}

# Waits up to 10 s for the instance's queue manager to be $1 (a process of
# the other one may still be on its way out after a reload).
pi_wait_qmgr() {
    i=0
    until [ "$(pi_qmgr_command)" = "$1" ]; do
        i=$((i + 1))
        [ $i -gt 100 ] && return 1
        sleep 0.1
    done
}
