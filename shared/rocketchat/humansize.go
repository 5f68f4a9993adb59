package rocketchat

import "fmt"

// HumanSize renders a byte count the way Rocket.Chat's UI does and the wake
// message shows it (seed §2.9: "auswertung.csv (text/csv, 77 B)"): 77 B,
// 1.2 KB, 3.4 MB.
func HumanSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KB", float64(n)/1024)
	case n < 1024*1024*1024:
		return fmt.Sprintf("%.1f MB", float64(n)/(1024*1024))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1024*1024*1024))
}
