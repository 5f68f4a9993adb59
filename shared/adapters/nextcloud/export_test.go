package nextcloud

import "github.com/switchboard-dev/switchboard/shared/switchboard"

// Test hooks: the production client always speaks OCS v2 and always sends
// OCS-APIRequest; tests need to see the other answers too.

// UseOCSv1 switches c to /ocs/v1.php (failures come as HTTP 200).
func UseOCSv1(c *Client) { c.ocsPrefix = "/ocs/v1.php" }

// OmitOCSHeader stops c from sending OCS-APIRequest: true.
func OmitOCSHeader(c *Client) { c.ocsHeader = false }

// The readers of a failed request's answer, under the names the tests
// use: the status Nextcloud answered (200 for an OCS v1 failure, whose
// real code is its OCS status), the OCS meta.statuscode and the endpoint.
var (
	HTTPStatus = switchboard.HTTPStatus
	OCSStatus  = switchboard.ServiceStatus
	Endpoint   = switchboard.Endpoint
)
