// A queued job's page: reload it every data-refresh-s seconds while the job waits or runs (the
// server stops sending this script once the job is done or failed).
(function () {
  var status = document.getElementById("job-status");
  if (!status) return;
  var seconds = parseInt(status.getAttribute("data-refresh-s"), 10);
  if (!(seconds > 0)) return;
  window.setTimeout(function () { window.location.reload(); }, seconds * 1000);
})();
