-- A logged-in shopper for wrk: reads the cart, adds to it, downloads through a signed link (whole and ranged).
--
--   wrk -s tests/soak/shopper.lua --latency URL -- COOKIE_NAME COOKIE LINK
--
-- Each thread sends the session cookie the server last set, as a browser would. Responses that are not
-- 2xx (the cart answers 403 once the session no longer holds the user) and Set-Cookie headers that would
-- end the session are counted; done() prints them with wrk's own figures as one JSON line.

local threads = {}
local items = { "tea", "cup", "pot", "spoon", "tray" }

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    cookie_name, cookie, link = args[1], args[2], args[3]
    sent, succeeded, failed, cookies_set, sessions_lost = 0, 0, 0, 0, 0
end

function request()
    sent = sent + 1
    local headers = { ["Cookie"] = cookie_name .. "=" .. cookie }
    local step = sent % 5
    if step == 0 then
        return wrk.format("POST", "/cart/add?item=" .. items[sent % #items + 1], headers)
    elseif step == 1 then
        return wrk.format("GET", link, headers)
    elseif step == 2 then
        headers["Range"] = "bytes=" .. (sent % 1000) .. "-" .. (sent % 1000 + 1023)
        return wrk.format("GET", link, headers)
    end
    return wrk.format("GET", "/cart", headers)
end

function response(status, headers, body)
    if status >= 200 and status < 300 then
        succeeded = succeeded + 1
    else
        failed = failed + 1
    end
    local set_cookie = headers["Set-Cookie"] or headers["set-cookie"]
    if set_cookie then
        cookies_set = cookies_set + 1
        local value = string.match(set_cookie, "^" .. cookie_name .. "=([^;]*)")
        if value and value ~= "" and value ~= '""' and value ~= "null" then
            cookie = value
        else
            sessions_lost = sessions_lost + 1
        end
    end
end

function done(summary, latency, requests)
    local totals = { succeeded = 0, failed = 0, cookies_set = 0, sessions_lost = 0 }
    for _, thread in ipairs(threads) do
        for name, _ in pairs(totals) do
            totals[name] = totals[name] + thread:get(name)
        end
    end
    local errors = summary.errors
    io.write(string.format(
        'SOAK-RESULT {"requests": %d, "duration_s": %.3f, "succeeded": %d, "non_2xx": %d, "cookies_set": %d, '
            .. '"sessions_lost": %d, "socket_errors": {"connect": %d, "read": %d, "write": %d, "timeout": %d}, '
            .. '"status_errors": %d, "latency_ms": {"p50": %.3f, "p90": %.3f, "p99": %.3f, "max": %.3f}}\n',
        summary.requests, summary.duration / 1e6, totals.succeeded, totals.failed, totals.cookies_set,
        totals.sessions_lost, errors.connect, errors.read, errors.write, errors.timeout, errors.status,
        latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
        latency.max / 1000
    ))
end
