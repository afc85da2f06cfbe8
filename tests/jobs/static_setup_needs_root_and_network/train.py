import soundfile
print(soundfile.__version__)
