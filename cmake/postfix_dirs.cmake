# Where `cmake --install` puts cqmgr: in Postfix's daemon_directory, because
# master(8) looks up the command of a master.cf line there.  Asked of the
# installed Postfix at configure time (main.cf's value, else Postfix's
# default when there is no main.cf yet); -DCQMGR_DAEMON_DIR=... overrides it,
# e.g. for a package built where Postfix is not installed.
if(NOT DEFINED CQMGR_DAEMON_DIR)
  set(_cqmgr_daemon_dir /usr/lib/postfix/sbin)
  find_program(CQMGR_POSTCONF postconf PATHS /usr/sbin /usr/local/sbin)
  if(CQMGR_POSTCONF)
    foreach(_flags -xh -dh)
      execute_process(COMMAND ${CQMGR_POSTCONF} ${_flags} daemon_directory
                      OUTPUT_VARIABLE _out RESULT_VARIABLE _rc ERROR_QUIET
                      OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(_rc EQUAL 0 AND NOT _out STREQUAL "")
        set(_cqmgr_daemon_dir ${_out})
        break()
      endif()
    endforeach()
  endif()
  set(CQMGR_DAEMON_DIR ${_cqmgr_daemon_dir} CACHE PATH
      "Postfix's daemon_directory, where cqmgr is installed")
  message(STATUS "cqmgr installs into daemon_directory ${CQMGR_DAEMON_DIR}")
endif()
