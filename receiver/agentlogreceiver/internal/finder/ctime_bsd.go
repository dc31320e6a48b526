// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

//go:build darwin || freebsd || netbsd

package finder

import (
	"os"
	"syscall"
)

// ctimeOf is a file's status change time (Unix ns), which no user can set:
// it moves whenever the modification time is set back.
func ctimeOf(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Ctimespec.Sec)*1e9 + int64(st.Ctimespec.Nsec) //nolint:unconvert // not int64 everywhere
	}
	return 0
}
