"""Push registration (``/v1/pushConfig``, ``/v1/devices...``): the VAPID public key a
browser subscribes with; register, list and remove a browser's subscription or a phone's
FCM token. A registration is checked by its channel first (an https endpoint of a known push
service and valid keys; a token FCM accepts for this project), else 400 ``invalid_device``
and nothing is stored. The device's id is a digest of what it names, so registering the same
subscription or token again answers the same device."""

from __future__ import annotations

import hashlib

import flask

from shared.app.api_call import ApiCall, cut_page, page_start
from shared.errors import InvalidDevice, NotFound
from shared.models.notifications import DEVICE_ID_PATTERN, Device
from shared.models.notify_api import DevicePage, DeviceResource, NewDevice, PushConfig
from shared.rest.paging import PageQuery, scope_of
from shared.web import json_response

DEVICES_PAGE = (50, 100)


def push_config(call: ApiCall) -> flask.Response:
    call.no_query()
    config = PushConfig(web_push_public_key=call.deps.web_push_public_key)
    return json_response(config.model_dump())


def device_resource(device: Device) -> DeviceResource:
    return DeviceResource(id=device.id, kind=device.kind, created_at=device.created_at)


def register(call: ApiCall) -> flask.Response:
    call.no_query()
    body = call.body(NewDevice)
    named = body.web_push.endpoint if body.web_push else str(body.fcm_token)
    digest = hashlib.sha256(f"{body.kind}\0{named}".encode()).hexdigest()[:32]
    device = Device(
        id=digest,
        kind=body.kind,
        web_push=body.web_push,
        fcm_token=body.fcm_token,
        created_at=call.deps.clock.now(),
    )
    channel = next((c for c in call.deps.push_channels if c.kind == body.kind), None)
    if channel is None:
        raise InvalidDevice(f"{body.kind}: push of this kind is not configured here")
    channel.check(device)
    stored = call.deps.notifications.add_device(call.user_id, device)
    return json_response(device_resource(stored).model_dump(mode="json"))


def list_devices(call: ApiCall) -> flask.Response:
    page = call.query(PageQuery)
    scope, size = scope_of("devices"), page.size(*DEVICES_PAGE)
    start = page_start(call, scope, page)
    found = call.deps.notifications.list_devices(call.user_id, size + 1, start)
    shown, token = cut_page(call, scope, size, found, lambda d: (d.created_at, d.id))
    body = DevicePage(devices=[device_resource(d) for d in shown], next_page_token=token)
    return json_response(body.model_dump(mode="json"))


def remove(call: ApiCall) -> flask.Response:
    call.no_query()
    device_id = call.id("device", DEVICE_ID_PATTERN)
    if not call.deps.notifications.remove_device(call.user_id, device_id):
        raise NotFound("no such device")
    return flask.Response(status=204)
