#!/bin/bash
echo "demo: not built yet"
