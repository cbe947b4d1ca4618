// Package sgstate implements streamgen's state stores: key-value, window and
// session stores, each in memory and on Pebble, with staged (transactional)
// writes so local state always matches the last committed Kafka transaction.
package sgstate
