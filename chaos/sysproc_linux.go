package chaos

import "syscall"

// sysProcAttr makes an instance die with the harness: a crashed or
// interrupted harness must not leave application processes running.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
