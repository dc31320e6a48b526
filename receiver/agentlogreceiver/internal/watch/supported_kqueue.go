// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package watch

// Supported: fsnotify's kqueue backend opens a descriptor for every
// file of a watched directory, which for a history of thousands of files
// would take the descriptors the reads need. These platforms poll.
const Supported = false
