// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

package finder // import "github.com/agentotel/agentotel/receiver/agentlogreceiver/internal/finder"

// FileID is a file's device and inode (zero where the platform has none).
type FileID struct{ Dev, Ino uint64 }
