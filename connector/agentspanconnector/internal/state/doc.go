// Copyright agentotel authors
// SPDX-License-Identifier: Apache-2.0

// Package state is what the agent_span connector saves (with its `storage`
// setting): the records of a session, of the index of active sessions and
// of the anchors, their storage keys, and reading them back. It holds no
// state of its own and decides nothing: the connector decides what to save
// and when.
package state
