package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/agentotel/agentotel/internal/storagecodec"
	bolt "go.etcd.io/bbolt"
)

func main() {
	db, err := bolt.Open(os.Args[1], 0600, &bolt.Options{ReadOnly: true})
	if err != nil {
		panic(err)
	}
	n := 0
	db.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("default")).ForEach(func(k, v []byte) error {
			if strings.Contains(string(k), os.Args[2]) && n < 3 {
				n++
				d := storagecodec.Decode(v)
				fmt.Printf("%s (%d -> %d)\n%s\n\n", k, len(v), len(d), d)
			}
			return nil
		})
	})
}
