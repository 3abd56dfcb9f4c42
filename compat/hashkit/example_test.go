package hashkit_test

import (
	"fmt"

	"github.com/kolco-dev/kolco/compat/hashkit"
)

func ExampleParse() {
	f, err := hashkit.Parse("fnv1a_64") // twemproxy's default
	if err != nil {
		panic(err)
	}
	fmt.Println(f([]byte("apple")))
	// Output: 1488911807
}
