# Sourced by the enable/disable test and tools/package-test: a private
# Postfix instance in a temporary directory, run by the system's own Postfix
# (postfix -c DIR start), with no network listener and its own log file.
# The system's /etc/postfix is only read (its master.cf is the template).
#
#   pi_create WORK DAEMON_DIR   config in WORK/conf, queue in WORK/queue
#   pi_start / pi_stop
#   pi_deliver TAG              one message to nobody, waits for it in the mailbox
#   pi_delivered_by TAG COMMAND  the message TAG was removed from the queue
#                               by a queue manager process running COMMAND
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

# The first word of process $1's command line.
pi_command_of() {
    { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null | cut -d' ' -f1
}

# Checks that the queue manager that removed message $1 (found by its
# subject in the mailbox: its queue ID is in Postfix's Received header) was
# a process running $2: its log lines name its pid.
pi_delivered_by() {
    qid=$(awk -v s="Subject: $1" '
        match($0, /[ \t]id [0-9A-Za-z]+;/) { qid = substr($0, RSTART + 4, RLENGTH - 5) }
        $0 == s { print qid; exit }' "$pi_work/mail/nobody")
    [ -n "$qid" ] || { echo "FAIL: no queue ID for message $1"; return 1; }
    i=0
    until pid=$(sed -n "s/.*postfix\/qmgr\[\([0-9]*\)\]: $qid: removed.*/\1/p" \
        "$pi_work/maillog") && [ -n "$pid" ]; do
        i=$((i + 1))
        [ $i -gt 100 ] && { echo "FAIL: no \"$qid: removed\" line"; return 1; }
        sleep 0.1
    done
    cmd=$(pi_command_of "$pid")
    [ "$cmd" = "$2" ] ||
        { echo "FAIL: message $1 ($qid) removed by pid $pid, running '$cmd', not $2"; return 1; }
}
