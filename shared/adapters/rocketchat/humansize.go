package rocketchat

import "fmt"

// HumanSize renders a byte count the way Rocket.Chat's UI does and the wake
// message shows it ("auswertung.csv (text/csv, 77 B)"): 77 B,
// 1.2 KB, 3.4 MB.
func HumanSize(n int64) string {
	if n < 1024 {
		return fmt.Sprintf("%d B", n)
	}
	// Pick the unit after rounding, so that 1,048,575 bytes is "1.0 MB",
	// not "1024.0 KB".
	v := float64(n) / 1024
	for _, unit := range []string{"KB", "MB"} {
		if v < 1023.95 {
			return fmt.Sprintf("%.1f %s", v, unit)
		}
		v /= 1024
	}
	return fmt.Sprintf("%.1f GB", v)
}
