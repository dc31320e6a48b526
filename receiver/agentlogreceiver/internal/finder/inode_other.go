// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

//go:build !unix

package finder

import "os"

// IDOf is zero where os.FileInfo carries no inode: a file replaced at
// the same path is then told by its size or its first line only, and one
// reached under two paths by its first line and head (read once when both
// are met in one poll, see resolve).
func IDOf(os.FileInfo) FileID { return FileID{} }

// ctimeOf is 0 where os.FileInfo carries no status change time (the
// directory listing cache is not used there).
func ctimeOf(os.FileInfo) int64 { return 0 }
